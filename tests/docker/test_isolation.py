"""A root arm with raw sockets against the docker backend (tests/docker/raw_arm.py).

It tries (a) a UDP datagram over IPv6 link-local to the host's bridge and (b) a UDP packet with
a forged source address to the host, both to servers this test binds on the host (`::` and
0.0.0.0, reached through the arm network's own bridge), and writes a guard line that blames the
other arm. By default the arm has no capabilities: its raw sockets are refused, the guard's
refusal is reported and halts the run at once. Given NET_RAW back, its frames leave the
container and the host's interface-matched IPv4/IPv6 rules must still refuse and name them.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.isolation.docker import network_gateway
from tests.docker.test_docker_backend import (
    leftovers,
    run_harness,
    run_id_of,
    wait_for_arms,
)
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]
FORGED_V4 = "10.123.45.67"


class Servers:
    """UDP servers of this test on the host, IPv4 (0.0.0.0) and IPv6 (::): no arm may reach
    either."""

    def __init__(self) -> None:
        self.v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.v4.bind(("0.0.0.0", 0))
        self.v6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        self.v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        self.v6.bind(("::", 0))
        self.received: list[tuple[object, bytes]] = []
        for sock in (self.v4, self.v6):
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        while True:
            try:
                data, peer = sock.recvfrom(2048)
            except OSError:
                return
            self.received.append((peer, data))

    def close(self) -> None:
        self.v4.close()
        self.v6.close()


@pytest.fixture
def servers() -> Iterator[Servers]:
    found = Servers()
    yield found
    found.close()


def link_local(interface: str) -> str:
    shown = subprocess.run(
        ["ip", "-6", "-o", "addr", "show", "dev", interface, "scope", "link"],
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"inet6 (fe80::[0-9a-f:]+)/", shown)
    assert match, f"the host's bridge {interface} has no IPv6 link-local address: {shown!r}"
    return match.group(1)


def run_raw_arm(
    client: docker.DockerClient,
    folder: Path,
    servers: Servers,
    fields: dict[str, Any],
    prober: dict[str, Any] | None = None,
) -> tuple[subprocess.Popen[str], str, Path, dict[str, object]]:
    """Start `harness record` on the raw arm; once its container runs, aim it at the servers.
    `fields` are study.toml's, `prober` the prober arm's table beside its command."""
    study_dir = folder / "study"
    study_dir.mkdir()
    shutil.copy(Path(__file__).with_name("raw_arm.py"), study_dir / "raw_arm.py")
    turns = [{"user": "probe"}, {"user": "again"}]
    items = [{"id": f"i{n}", "clock": "2024-05-01T10:00:00Z", "turns": turns} for n in (1, 2)]
    arms = {
        "prober": {"command": "python raw_arm.py", **(prober or {})},
        "other": {"command": "python raw_arm.py"},
    }
    builder = StudyBuilder(name="raw", items=items, arms=arms)
    study = builder.set(deadline_ms=60000, **fields).write(study_dir)
    runs = folder / "runs"
    process = run_harness("record", str(study), "--isolation", "docker", "--run-dir", str(runs))
    try:
        containers = wait_for_arms(client, ["prober", "other"])
    except BaseException:
        process.kill()
        raise
    container = next(c for n, c in containers.items() if n.endswith("-prober"))
    network = next(iter(container.attrs["NetworkSettings"]["Networks"]))
    bridge = f"br-{client.networks.get(network).id[:12]}"  # Docker's name for a user bridge
    targets: dict[str, object] = {
        "v6": [
            Path(f"/sys/class/net/{bridge}/address").read_text().strip(),
            link_local(bridge),
            servers.v6.getsockname()[1],
        ],
        "udp": [network_gateway(network), servers.v4.getsockname()[1]],
    }
    (study_dir / "targets.json").write_text(json.dumps(targets))
    try:
        output, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    return process, output, runs / run_id_of(runs), targets


def records(run_dir: Path, name: str) -> list[dict[str, object]]:
    lines = (run_dir / name).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_root_arm_without_capabilities_is_refused_and_the_run_halts(
    docker_engine: docker.DockerClient, images: None, servers: Servers, tmp_path: Path
) -> None:
    process, output, run_dir, _ = run_raw_arm(docker_engine, tmp_path, servers, {})
    assert process.returncode == 1, output  # a failed run, and the summary says why
    # Named by the first evidence seen: the guard's refused raw socket, or the DNS refuser's
    # lookup when both arrived before the harness looked (the harness's own evidence first).
    (line,) = [x for x in output.splitlines() if x.startswith("  halted at once")]
    assert "arm 'prober' tried to reach " in line, line
    assert "raw socket (AF_PACKET) (guard)" in line or "exfiltrate.example (dns)" in line, line
    assert 'on_stray = "fail" in the study finishes the run' in output
    turns = records(run_dir, "turns.jsonl")
    prober = [t for t in turns if t["arm"] == "prober"]
    # The turn in flight is marked; no later turn of the prober (or of anyone) ran.
    assert [(t["item"], t["turn"], t["outcome"]) for t in prober] == [("i1", 0, "stray_connection")]
    assert all(t["item"] == "i1" and t["turn"] == 0 for t in turns), turns
    log = (run_dir / "logs" / "prober" / "arm.log").read_text()
    results = json.loads(log.split("raw arm results ", 1)[1].splitlines()[0])
    for attempt in ("guard raw", "v6 udp", "forged udp"):
        assert results[attempt].startswith("failed: PermissionError"), results
    header = json.loads((run_dir / "run.json").read_text())["study"]
    assert header["passed"] is False and header["capabilities"] == {"prober": [], "other": []}
    assert header["halted"] in line
    egress = records(run_dir, "egress.jsonl")
    assert any(e.get("kind") == "raw_socket" and e["arm"] == "prober" for e in egress), egress
    assert servers.received == []
    assert leftovers(docker_engine, run_dir.name) == []


def test_an_arm_given_net_raw_is_still_refused_and_named_by_the_host(
    docker_engine: docker.DockerClient, images: None, servers: Servers, tmp_path: Path
) -> None:
    process, output, run_dir, targets = run_raw_arm(
        docker_engine, tmp_path, servers, {"on_stray": "fail"}, {"cap_add": ["NET_RAW"]}
    )
    assert process.returncode == 1, output  # every turn ran; the run failed at its end
    turns = records(run_dir, "turns.jsonl")
    prober = [t for t in turns if t["arm"] == "prober"]
    results = json.loads(str(prober[0]["text"]))
    assert results["guard raw"].startswith("failed: PermissionError"), results  # the guard
    assert results["v6 udp"] == "sent" and results["forged udp"] == "sent", results
    assert servers.received == [], "a raw frame reached the test's server on the host"
    header = json.loads((run_dir / "run.json").read_text())["study"]
    assert header["capabilities"] == {"prober": ["NET_RAW"], "other": []}
    assert header["passed"] is False
    egress = records(run_dir, "egress.jsonl")
    kernel = [e for e in egress if e["source"] == "kernel"]
    _mac, ll, port6 = targets["v6"]  # type: ignore[misc]
    gateway, port4 = targets["udp"]  # type: ignore[misc]
    # (a) IPv6 link-local to the host's bridge: refused and named by the ip6tables rules.
    assert any(e["destination"] == f"[{ll}]:{port6}" and e["protocol"] == "udp" for e in kernel), (
        kernel
    )
    # (b) the forged source is named as claimed, but the packet is the prober's (its bridge).
    forged = [e for e in kernel if e["destination"] == f"{gateway}:{port4}"]
    assert forged and all(e["claimed_source"] == FORGED_V4 for e in forged), kernel
    assert {e["arm"] for e in kernel} == {"prober"}
    # The outside name it looked up past the guard: refused by the arms' DNS server, named.
    assert results["dns"].startswith("failed"), results
    dns = [e for e in egress if e["source"] == "dns"]
    assert dns and {(e["arm"], e["destination"]) for e in dns} == {
        ("prober", "exfiltrate.example")
    }, dns
    # The guard line naming the other arm is the prober's, flagged; the other arm is clean.
    blamed = [e for e in egress if e.get("claimed_arm") == "other"]
    assert blamed and all(e["arm"] == "prober" and e["flags"] == ["forged"] for e in blamed)
    assert {e["arm"] for e in egress} == {"prober"}
    assert all(t["stray_connections"] == 0 for t in turns if t["arm"] == "other")
    assert leftovers(docker_engine, run_dir.name) == []
