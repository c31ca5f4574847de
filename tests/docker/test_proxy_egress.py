"""The OS rule on the proxy's own traffic (harness/isolation/proxy_rules.py), on the docker
backend: a live proxy made to connect to a server on the host that is not a vendor address is
refused, the attempt is logged in proxy_egress.jsonl, and the run fails naming it; an HTTPS
connection to an address no vendor host resolved to is logged apart; the vendor itself is still
reached. The gate's record runs show the rule holds with nothing allowed and refuses nothing a
normal proxy does.

The proxy is "made to connect" from inside its own container (`docker exec`), as a hostile
dependency of the proxy would: the proxy's code itself never opens such a connection.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest

from harness.isolation import egress_probe
from tests.docker.test_docker_backend import leftovers
from tests.docker.test_docker_live import bridge_gateway, write_study
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import REPO, harness, read_jsonl
from tests.proxy.live_helpers import STUDY_ANTHROPIC_KEY, STUDY_KEYS, STUDY_OPENAI_KEY

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

# Run inside the proxy container: a connection to the other server, one to port 443 of the
# same host address (nothing listens there; the rule refuses it before anything could answer),
# and TCP and a DNS query over UDP to port 53 there, where the test listens: the docker proxy
# has no DNS at all (its vendor names are pinned), so port 53 is a port like any other.
PROBE = """
import socket, sys
for port in (int(sys.argv[2]), 443, 53):
    try:
        socket.create_connection((sys.argv[1], port), timeout=5).close()
        print(port, "connected")
    except OSError as e:
        print(port, type(e).__name__)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    s.sendto(bytes.fromhex(sys.argv[3]), (sys.argv[1], 53))
print("udp sent")
"""


class OtherServer:
    """A TCP server on the host that is no vendor: it counts whoever reaches it."""

    def __init__(self, host: str) -> None:
        self.sock = socket.create_server((host, 0))
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@dataclass
class Outcome:
    live_run: Path
    gate_runs: list[Path]
    code: int
    stdout: str
    probe: str
    gateway: str
    other: OtherServer
    vendor_requests: int
    port_53_reached: list[str]


def _proxy_container(client: docker.DockerClient, skip: set[str]) -> str:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        for c in client.containers.list(filters={"label": "harness.run"}):
            if c.name.endswith("-proxy") and c.labels["harness.run"] not in skip:
                return str(c.name)
        time.sleep(0.2)
    raise AssertionError("the live run's proxy container never appeared")


@pytest.fixture(scope="module")
def outcome(
    docker_engine: docker.DockerClient, images: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Outcome]:
    base = tmp_path_factory.mktemp("proxy-egress")
    keys = {"anthropic": STUDY_ANTHROPIC_KEY, "openai": STUDY_OPENAI_KEY}
    gateway = bridge_gateway(docker_engine)
    vendor = FakeVendor(api_keys=keys)
    vendor.host = gateway
    other = OtherServer(gateway)
    port_53 = egress_probe.Listener(gateway)  # a server on port 53 that is no resolver
    runs = base / "runs"
    with vendor:
        study = write_study(base / "study", vendor.url)
        done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "docker")
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        gate_ids = {p.name for p in runs.iterdir()}
        vendor.script(["first_byte_delay=5"])  # the live run is still going when the probe runs
        live = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "--log-json", "live", str(study), "--cap", "2",
             "--run-dir", str(runs), "--isolation", "docker"],
            cwd=REPO, env={**os.environ, **STUDY_KEYS, "HARNESS_NO_PROGRESS": "1"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        proxy = _proxy_container(docker_engine, gate_ids)
        time.sleep(1)  # its rules are in before it starts; give its process a moment to exist
        probe = subprocess.run(
            ["docker", "exec", proxy, "python", "-c", PROBE, gateway, str(other.port),
             egress_probe.QUERY.hex()],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        stdout, stderr = live.communicate(timeout=600)
        vendor.wait_idle()
        requests = len(vendor.requests)
    other.close()
    reached = port_53.reached()
    port_53.close()
    headers = {p: json.loads(p.read_text()) for p in runs.glob("*/run.json")}
    (live_run,) = [p.parent for p, h in headers.items() if h["mode"] == "live"]
    gate_runs = [p.parent for p, h in headers.items() if h["mode"] == "record"]
    yield Outcome(
        live_run, gate_runs, live.returncode, stdout + stderr, probe.stdout + probe.stderr,
        gateway, other, requests, reached,
    )  # fmt: skip


def test_a_connection_to_a_host_server_that_is_no_vendor_is_refused(outcome: Outcome) -> None:
    assert f"{outcome.other.port} ConnectionRefusedError" in outcome.probe, outcome.probe
    assert "443 ConnectionRefusedError" in outcome.probe, outcome.probe
    assert outcome.other.accepted == 0
    assert "53 ConnectionRefusedError" in outcome.probe, outcome.probe
    assert outcome.port_53_reached == []  # neither the TCP connection nor the datagram


def test_it_is_logged_and_the_run_fails_naming_it(outcome: Outcome) -> None:
    entries = read_jsonl(outcome.live_run / "proxy_egress.jsonl")
    refused = f"{outcome.gateway}:{outcome.other.port}"
    kinds = {(e["destination"], e["kind"]) for e in entries}
    assert (refused, "refused") in kinds
    assert (f"{outcome.gateway}:443", "https_unresolved") in kinds
    assert (f"{outcome.gateway}:53", "refused") in kinds
    protocols = {(e["destination"], e["protocol"]) for e in entries}
    assert {(f"{outcome.gateway}:53", "tcp"), (f"{outcome.gateway}:53", "udp")} <= protocols
    assert all(e["schema"] == 1 for e in entries)
    # The start probe (from a container of its own, to the proxy network's gateway) is not the
    # proxy's: nothing but the attempts above.
    assert {e["destination"] for e in entries} == {
        refused,
        f"{outcome.gateway}:443",
        f"{outcome.gateway}:53",
    }
    assert outcome.code == 1, outcome.stdout[-3000:]
    assert "FAILED: the proxy itself tried connections outside its vendors" in outcome.stdout
    assert f"{refused} (refused)" in outcome.stdout
    run = json.loads((outcome.live_run / "run.json").read_text())["study"]
    assert run["passed"] is False
    assert run["proxy_refused"][f"{refused} (refused)"] >= 1
    assert run["proxy_rule"].startswith("enforced: the proxy may open TCP to ")
    assert f"={outcome.gateway}:" in run["proxy_rule"]
    assert "(no DNS: the names are pinned)" in run["proxy_rule"]
    assert run["proxy_rule"].endswith("; checked at start by a probe")


def test_the_vendor_is_still_reached(outcome: Outcome) -> None:
    run = json.loads((outcome.live_run / "run.json").read_text())["study"]
    assert outcome.vendor_requests > 0
    assert run["outcomes"] == {"done": 6}, run["outcomes"]  # every turn, through the vendor


def test_record_runs_allow_nothing_and_refuse_nothing(outcome: Outcome) -> None:
    assert len(outcome.gate_runs) == 2
    for run_dir in outcome.gate_runs:
        run = json.loads((run_dir / "run.json").read_text())["study"]
        assert run["proxy_rule"] == (
            "enforced: the proxy may open TCP to nothing; checked at start by a probe"
        )
        assert run["proxy_refused"] == {} and run["passed"] is True
        assert (run_dir / "proxy_egress.jsonl").read_text() == ""


def test_nothing_is_left_behind(outcome: Outcome, docker_engine: docker.DockerClient) -> None:
    assert leftovers(docker_engine, outcome.live_run.name) == []
