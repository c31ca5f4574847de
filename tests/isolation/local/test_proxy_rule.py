"""The OS rule on the proxy's own traffic on the local backend, as root (local/proxy_rule.py): a
process in the live proxy's cgroup (where its packets are told apart) that connects to a server
on this host that is no vendor is refused, logged in proxy_egress.jsonl, and the run fails
naming it, while the vendor is reached; the rules and the cgroup are gone after the run. On
loopback the proxy reaches its own stub stream server's port and no other (a record run streams
through it; a retried start with new ports moves the rule to the new port)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.isolation import owner
from harness.isolation.local import proxy_rule as local_proxy_rule
from ledger.ledger import Ledger
from rundir.control.proxy_file import ProxyFile, ProxySettings
from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import gate_study
from tests.helpers.studies import REPO, harness, header, only_run, read_jsonl
from tests.pg_server import PgServer, pg_bin
from tests.proxy.live_helpers import STUDY_KEYS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

# Joins the cgroup given, then connects where the proxy must not.
PROBE = """
import socket, sys
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write("0")
for port in map(int, sys.argv[2:]):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        print(port, "connected")
    except OSError as e:
        print(port, type(e).__name__)
"""


def _is_proxy(pid: str) -> bool:
    try:
        return b"\0-m\0proxy\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _cgroup_of(harness_pid: int) -> Path:
    root = local_proxy_rule.cgroup2_root()
    assert root is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list(root.glob(f"harness-*-proxy-{harness_pid}"))
        if found and any(_is_proxy(pid) for pid in (found[0] / "cgroup.procs").read_text().split()):
            return found[0]  # the proxy is in it (before it, the harness's start probe is)
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
            [sys.executable, "-c", PROBE, str(cgroup), str(port), "443"],
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
    assert run["proxy_rule"].startswith("enforced: the proxy may open DNS queries (UDP) to ")
    assert " and TCP to 127.0.0.1=" in run["proxy_rule"]
    assert "checked at start by a probe" in run["proxy_rule"]
    assert run["outcomes"] == {"done": 3} and run["passed"] is False
    assert not cgroup.exists()  # removed with the rules when the run ended
    rules = subprocess.run(["iptables", "-S"], capture_output=True, text=True).stdout
    assert run_dir.name not in rules


NEEDS_ROOT = pytest.mark.skipif(
    local_proxy_rule.unavailable() is not None, reason="needs root and cgroup2"
)


@NEEDS_ROOT
def test_a_record_run_streams_through_the_rule_and_nothing_is_refused(tmp_path: Path) -> None:
    # The quickstart's replies are streamed: record mode plays them through the proxy's own
    # stream server on 127.0.0.1, which the rule must let the proxy reach (and only it).
    study = REPO / "examples" / "quickstart" / "study.toml"
    done = harness("record", str(study), "--run-dir", str(tmp_path), "--isolation", "local")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    run_dir = only_run(tmp_path)
    run = header(run_dir)["study"]
    port = ProxyFile.read(run_dir / "proxy.json").settings.stream_port
    assert port > 0
    assert run["proxy_rule"].startswith(
        f"enforced: the proxy may open TCP to its stream server 127.0.0.1:{port}; checked at start"
    )
    assert run["passed"] and run["outcomes"] == {"done": 18}
    assert (run_dir / "proxy_egress.jsonl").read_text() == ""
    assert any(c.get("stream") for c in read_jsonl(run_dir / "calls.jsonl"))


@NEEDS_ROOT
def test_on_loopback_only_the_stream_server_port_is_allowed_and_a_retry_moves_it(
    tmp_path: Path,
) -> None:
    servers = [socket.create_server(("127.0.0.1", 0)) for _ in range(3)]
    first, second, other = (s.getsockname()[1] for s in servers)
    run_id = f"rule-{os.getpid()}-{time.time_ns()}"
    rule = local_proxy_rule.LocalProxyRule(tmp_path)
    comment = owner.rule_comment(run_id)
    try:
        for port in (first, second):  # the second start is a retry after a port was taken
            rule.start(ProxySettings(run_id=run_id, stream_port=port), comment)
        assert rule.said.startswith(
            f"enforced: the proxy may open TCP to its stream server 127.0.0.1:{second}; "
        )
        assert rule.cgroup is not None
        probe = subprocess.run(
            [sys.executable, "-c", PROBE, str(rule.cgroup), str(first), str(second), str(other)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        cgroup = rule.cgroup
    finally:
        refused = rule.stop()
        for server in servers:
            server.close()
    assert probe.stdout.split("\n")[:3] == [
        f"{first} ConnectionRefusedError",
        f"{second} connected",
        f"{other} ConnectionRefusedError",
    ], probe.stdout + probe.stderr
    entries = read_jsonl(tmp_path / "proxy_egress.jsonl")
    assert {e["destination"] for e in entries} == {f"127.0.0.1:{first}", f"127.0.0.1:{other}"}
    assert refused and not cgroup.exists()
    assert run_id not in subprocess.run(["iptables", "-S"], capture_output=True, text=True).stdout


@NEEDS_ROOT
@pytest.mark.skipif(pg_bin() is None, reason="needs PostgreSQL")
def test_a_live_run_reaches_its_postgres_ledger_through_the_rule(tmp_path: Path) -> None:
    # The proxy books every call in the ledger itself: a postgresql:// ledger is a destination
    # the study names, as its vendors are, so the rule lets the proxy reach its address only.
    pg_server = PgServer()
    try:
        url = pg_server.new_database()
        with FakeVendor() as vendor:
            study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
            runs = tmp_path / "runs"
            done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
            assert done.returncode == 0, done.stderr[-3000:]
            live = harness(
                "live", str(study), "--cap", "1", "--run-dir", str(runs), "--isolation", "local",
                env={**STUDY_KEYS, "HARNESS_LEDGER_URL": url, "HARNESS_LEDGER": None},
            )  # fmt: skip
        with Ledger(url) as led:
            booked = led.state().runs
    finally:
        pg_server.stop()
    assert live.returncode == 0, live.stdout[-2000:] + live.stderr[-3000:]
    (run_dir,) = [
        p.parent for p in runs.glob("*/run.json") if "live" in json.loads(p.read_text())["mode"]
    ]
    assert (run_dir / "proxy_egress.jsonl").read_text() == ""
    rule = header(run_dir)["study"]["proxy_rule"]
    assert f"ledger 127.0.0.1=127.0.0.1:{pg_server.port}" in rule, rule
    assert booked[run_dir.name].settled
