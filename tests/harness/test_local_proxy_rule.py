"""The OS rule on the proxy's own traffic on the local backend, as root (local_proxy_rule.py): a
process in the live proxy's cgroup (where its packets are told apart) that connects to a server
on this host that is no vendor is refused, logged in proxy_egress.jsonl, and the run fails
naming it, while the vendor is reached; the rules and the cgroup are gone after the run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.isolation import local_proxy_rule
from tests.fakevendor.server import FakeVendor
from tests.harness.checks import gate_study
from tests.harness.studies import REPO, harness, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

# Joins the cgroup given, then connects where the proxy must not.
PROBE = """
import socket, sys
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write("0")
for port in (int(sys.argv[2]), 443):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        print(port, "connected")
    except OSError as e:
        print(port, type(e).__name__)
"""


def _cgroup_of(harness_pid: int) -> Path:
    root = local_proxy_rule.cgroup2_root()
    assert root is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list(root.glob(f"harness-*-proxy-{harness_pid}"))
        if found and (found[0] / "cgroup.procs").read_text().strip():  # the proxy is in it
            return found[0]
        time.sleep(0.1)
    raise AssertionError("the live proxy's cgroup never filled")


@pytest.mark.skipif(local_proxy_rule.unavailable() is not None, reason="needs root and cgroup2")
def test_a_proxy_connection_to_a_non_vendor_host_server_is_refused_and_fails_the_run(
    tmp_path: Path,
) -> None:
    other = socket.create_server(("127.0.0.1", 0))
    other.settimeout(0.1)
    with FakeVendor() as vendor, other:
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
        runs = tmp_path / "runs"
        done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stderr[-3000:]
        vendor.script(["first_byte_delay=3"])
        live = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "live", str(study), "--cap", "1",
             "--run-dir", str(runs), "--isolation", "local"],
            cwd=REPO, env={**os.environ, **STUDY_KEYS, "HARNESS_NO_PROGRESS": "1"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        cgroup = _cgroup_of(live.pid)
        port = other.getsockname()[1]
        probe = subprocess.run(
            [sys.executable, "-c", PROBE, str(cgroup), str(port)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        stdout, stderr = live.communicate(timeout=300)
        with pytest.raises(TimeoutError):
            other.accept()  # nothing reached it
    assert f"{port} ConnectionRefusedError" in probe.stdout, probe.stdout + probe.stderr
    assert "443 ConnectionRefusedError" in probe.stdout
    (run_dir,) = [
        p.parent for p in runs.glob("*/run.json") if "live" in json.loads(p.read_text())["mode"]
    ]
    entries = read_jsonl(run_dir / "proxy_egress.jsonl")
    assert {(e["destination"], e["kind"]) for e in entries} == {
        (f"127.0.0.1:{port}", "refused"),
        ("127.0.0.1:443", "https_unresolved"),
    }
    assert live.returncode == 1, stdout + stderr[-3000:]
    assert f"127.0.0.1:{port} (refused)" in stdout
    run = json.loads((run_dir / "run.json").read_text())["study"]
    assert run["proxy_rule"].startswith("enforced: the proxy may open DNS and TCP to 127.0.0.1=")
    assert run["outcomes"] == {"done": 3} and run["passed"] is False
    assert not cgroup.exists()  # removed with the rules when the run ended
    rules = subprocess.run(["iptables", "-S"], capture_output=True, text=True).stdout
    assert run_dir.name not in rules
