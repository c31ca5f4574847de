"""The stub stream server's port comes from proxy.json (`settings.stream_port`, picked by the
backend so the proxy's OS rule can allow exactly it). When another process holds that port the
proxy must not say it is ready: it exits naming the taken address, which the local backend
retries with fresh ports. An older proxy.json without the field still reads (0: any port)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from harness.isolation.ports import free_ports
from rundir.control.proxy_file import PROXY_READY, ProxyFile, ProxySettings

REPO = Path(__file__).resolve().parents[3]


def test_a_taken_stream_port_stops_the_proxy_before_it_is_ready(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        arm_port, control_port = free_ports(2)
        settings = ProxySettings(
            run_dir=tmp_path, run_id="r1", stream_port=taken.getsockname()[1], arms=["a"]
        )
        path = tmp_path / "proxy.json"
        ProxyFile(settings=settings, arm_ports={"a": arm_port}, control_port=control_port).write(
            path
        )
        done = subprocess.run(
            [sys.executable, "-m", "proxy", str(path)],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode != 0
    assert PROXY_READY not in done.stdout
    assert "address already in use" in (done.stdout + done.stderr).lower(), done.stderr[-2000:]


def test_a_proxy_file_without_a_stream_port_reads_as_any_port(tmp_path: Path) -> None:
    path = tmp_path / "proxy.json"
    ProxyFile(settings=ProxySettings(run_id="r1"), arm_ports={"a": 1}, control_port=2).write(path)
    data = json.loads(path.read_text())
    del data["settings"]["stream_port"]  # as written before the field existed
    path.write_text(json.dumps(data))
    config = ProxyFile.read(path)
    assert config.settings.stream_port == 0
    assert config.options()["harness_stream_port"] == 0
