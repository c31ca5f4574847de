"""The docker isolation backend with real containers: arms reach nothing but the proxy, every
stray attempt is named in egress.jsonl, the quickstart runs in containers, and nothing is left
behind (containers, networks, iptables rules), also after a crash.

Every address aimed at belongs to this test: a server it binds on the host (0.0.0.0, reached
through the arm network's gateway), the run's other arm, and a server container on a network
the test creates.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from harness.images.image import ARM
from harness.isolation.docker import network_gateway
from tests.helpers.studies import read_jsonl
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, "-m", "harness.cli"]
TEST_LABEL = {"harness.test": "tests/docker/test_docker_backend.py"}


@pytest.fixture(scope="module")
def images(docker_engine: docker.DockerClient) -> None:
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True), lambda line: None)


def leftovers(client: docker.DockerClient, run_id: str) -> list[str]:
    """Containers, networks, iptables rules and mounts of `run_id` still present."""
    label = f"harness.run={run_id}"
    found = [c.name for c in client.containers.list(all=True, filters={"label": label})]
    found += [n.name for n in client.networks.list(filters={"label": label})]
    for tool in ("iptables", "ip6tables"):
        rules = subprocess.run([tool, "-S"], capture_output=True, text=True).stdout
        found += [line for line in rules.splitlines() if run_id in line]
    # The arms' bounded disks (loop images and their bind mounts in the run's folders).
    found += [line for line in Path("/proc/mounts").read_text().splitlines() if run_id in line]
    return found


def run_harness(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1"}
    return subprocess.Popen(
        [*HARNESS, *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )


def run_id_of(run_root: Path) -> str:
    (run_dir,) = [p for p in run_root.iterdir() if p.is_dir()]
    return run_dir.name


def test_compose_file_names_the_proxy_and_arms_on_internal_networks(tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    from harness.isolation.docker import compose_images
    from harness.study import load_study

    compose = REPO / "compose.yaml"
    data = YAML(typ="safe").load(compose.read_text())
    assert set(data["services"]["proxy"]["networks"]) >= {"bare", "retrieval"}
    for arm in ("bare", "retrieval"):
        assert data["services"][arm]["networks"] == [arm]
        assert data["networks"][arm]["internal"] is True
    # A study next to it names its services as arms; the backend takes their images.
    shutil.copy(compose, tmp_path / "compose.yaml")
    items = read_jsonl(REPO / "examples" / "quickstart" / "items.jsonl")
    study = load_study(
        StudyBuilder(name="c", items=items, arms=["bare", "retrieval"]).write(tmp_path)
    )
    assert study.arms["bare"].command == ["python", "-m", "arms.bare"]
    assert compose_images(study.compose_path) == {
        "proxy": "harness-proxy",
        "bare": "harness-arm",
        "retrieval": "harness-arm",
    }


def test_the_readme_first_command_runs_the_quickstart_in_containers(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> None:
    # No --isolation: with an engine and the images, auto must choose docker.
    done = subprocess.run(
        [str(REPO / "scripts" / "quickstart"), "--run-dir", str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "HARNESS_NO_PROGRESS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    run_dir = tmp_path / run_id_of(tmp_path)
    header = json.loads((run_dir / "run.json").read_text())
    assert header["study"]["isolation"] == "docker", header["study"]["isolation_reason"]
    assert "isolation: docker (auto:" in done.stdout
    assert header["study"]["clock_pinning"] == "libfaketime"
    assert header["study"]["passed"] is True
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
    assert {c["arm"] for c in calls} == {"bare", "retrieval"}
    assert all(c["item"] and c["turn"] is not None for c in calls)
    assert (run_dir / "egress.jsonl").read_text() == ""
    assert leftovers(docker_engine, run_dir.name) == []


@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server of this test on every host address: an arm must not reach it."""
    server = socket.create_server(("0.0.0.0", 0))
    accepted: list[object] = []

    def serve() -> None:
        while True:
            try:
                conn, peer = server.accept()
            except OSError:
                return
            accepted.append(peer)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield int(server.getsockname()[1])
    server.close()
    assert accepted == [], "an arm reached the test's host server"


@pytest.fixture
def server_container(docker_engine: docker.DockerClient, images: None) -> Iterator[tuple[str, str]]:
    """A web server container on a network of the test's own (no arm is on it)."""
    tag = uuid.uuid4().hex[:8]
    network = docker_engine.networks.create(f"harness-test-srv-{tag}", labels=TEST_LABEL)
    container = docker_engine.containers.run(
        ARM.tag,
        ["python3", "-m", "http.server", "8000"],
        name=f"harness-test-server-{tag}",
        network=network.name,
        labels=TEST_LABEL,
        detach=True,
    )
    container.reload()
    address = container.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
    yield container.name, address
    container.remove(force=True)
    network.remove()


def write_egress_study(folder: Path, on_stray: str = "fail") -> Path:
    """The prober and the other arm; by default the run goes on past strays (`on_stray =
    "fail"`) so the other arm's turn runs too."""
    shutil.copy(Path(__file__).parent / "egress_arm.py", folder / "egress_arm.py")
    item = {"id": "probe", "clock": "2024-05-01T10:00:00Z", "turns": [{"user": "go"}]}
    study = StudyBuilder(name="egress", items=[item])
    study.arm("prober", "python egress_arm.py").arm("other", "python egress_arm.py")
    study.set(deadline_ms=90000, ledger="ledger.jsonl", on_stray=on_stray)
    return study.write(folder)


def wait_for_arms(
    client: docker.DockerClient, names: list[str]
) -> dict[str, docker.models.containers.Container]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        found = {c.name: c for c in client.containers.list(filters={"label": "harness.run"})}
        wanted = {n: c for n, c in found.items() if any(n.endswith(f"-{x}") for x in names)}
        if len(wanted) == len(names):
            return wanted
        time.sleep(0.3)
    raise AssertionError(f"the run's arm containers never appeared: {names}")


def test_arm_reaches_nothing_but_the_proxy(
    docker_engine: docker.DockerClient,
    host_server: int,
    server_container: tuple[str, str],
    tmp_path: Path,
) -> None:
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    study = write_egress_study(study_dir)
    runs = tmp_path / "runs"
    process = run_harness("record", str(study), "--isolation", "docker", "--run-dir", str(runs))
    try:
        arms = wait_for_arms(docker_engine, ["prober", "other"])
        prober = next(c for n, c in arms.items() if n.endswith("-prober"))
        other = next(c for n, c in arms.items() if n.endswith("-other"))
        prober_net = next(iter(prober.attrs["NetworkSettings"]["Networks"]))
        gateway = network_gateway(prober_net)
        other_ip = next(iter(other.attrs["NetworkSettings"]["Networks"].values()))["IPAddress"]
        server_name, server_ip = server_container
        proxy = docker_engine.containers.get(prober.name.removesuffix("-prober") + "-proxy")
        other_net = next(iter(other.attrs["NetworkSettings"]["Networks"]))
        proxy_for_other = proxy.attrs["NetworkSettings"]["Networks"][other_net]["IPAddress"]
        other_listener = json.loads((runs / run_id_of(runs) / "proxy.json").read_text())
        targets = [
            (gateway, host_server),  # (a) the host, by address (its bridge gateway)
            (socket.gethostname(), host_server),  # (a) the host, by name
            (other_ip, 8700),  # (b) the other arm's seam, by address
            (other.name, 8700),  # (b) ... by name
            (server_ip, 8000),  # (c) a server on a network the arm is not on
            (server_name, 8000),
            # the proxy's listener for the other arm (calls there would be misattributed)
            (proxy_for_other, other_listener["arm_ports"]["other"]),
        ]
        (study_dir / "targets.json").write_text(json.dumps(targets))
        output, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, output  # the run is marked failed
    run_dir = runs / run_id_of(runs)
    header = json.loads((run_dir / "run.json").read_text())
    assert header["study"]["passed"] is False
    assert header["study"]["stray_connections"] > 0
    turns = {
        record["arm"]: record
        for record in map(json.loads, (run_dir / "turns.jsonl").read_text().splitlines())
    }
    # The other arm's wall clock was pinned to the item's date (libfaketime in its container).
    clock = json.loads(turns["other"]["text"])
    assert clock["now"].startswith("2024-05-01T10:00")
    pinned = datetime.datetime(2024, 5, 1, 10, tzinfo=datetime.UTC).timestamp()
    assert pinned <= clock["time"] < pinned + 60
    results = json.loads(turns["prober"]["text"])
    assert results and all(r.startswith("failed") for r in results.values()), results
    # Charged to the turn that made them, when it ended (not only at the run's end).
    assert turns["prober"]["stray_connections"] >= len(targets)
    assert turns["other"]["stray_connections"] == 0
    egress = [json.loads(line) for line in (run_dir / "egress.jsonl").read_text().splitlines()]
    assert {e["arm"] for e in egress} == {"prober"}
    named = {(e["destination"], e["source"]) for e in egress}
    for host, port in targets:
        assert (f"{host}:{port}", "guard") in named, (host, port, egress)
    # The raw socket bypasses the guard: the host's rules refused it and the kernel log named it.
    assert (f"{gateway}:{host_server}", "kernel") in named, egress
    assert len(named) == len(egress), "duplicate egress entries"
    # Real times, though the arm's own clock said 2024-05-01 (the guard's stamp, kept apart).
    this_year = time.strftime("%Y")
    assert all(str(e["time"]).startswith(this_year) for e in egress), egress
    assert all(e["arm_time"].startswith("2024-05-01") for e in egress if e["source"] == "guard")
    assert leftovers(docker_engine, run_dir.name) == []


CRASH = """
import asyncio, os, sys
from pathlib import Path
from harness.isolation.base import ProxySettings
from harness.isolation.docker import DockerBackend
from harness.study import ArmSpec

run_dir = Path(sys.argv[1])
backend = DockerBackend(run_dir)
settings = ProxySettings(run_dir=run_dir, run_id=run_dir.name, mode="record", arms=["a", "b"])

async def start():
    proxy = await backend.start_proxy(settings)
    # One arm too: its bounded disk is mounted until someone releases it.
    await backend.start_arm("a", ArmSpec(command=["python", "-m", "arms.bare"]), proxy)

asyncio.run(start())
os._exit(9)  # a crash: nothing stopped
"""


def test_cleanup_removes_what_a_crashed_run_left(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> None:
    run_id = f"crash-{uuid.uuid4().hex[:6]}"
    run_dir = tmp_path / run_id
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH, str(run_dir)], cwd=REPO, capture_output=True, text=True
    )
    assert crashed.returncode == 9, crashed.stderr
    left = leftovers(docker_engine, run_id)
    # Per arm: IPv4 RETURNs for its 2 listeners and the DNS refuser + LOG/REJECT in INPUT and
    # DOCKER-USER; IPv6 LOG/REJECT in INPUT and FORWARD (or DOCKER-USER). And the proxy's own
    # rule (proxy_rules.py, record mode: nothing allowed): LOG/REJECT for HTTPS and for the rest
    # in INPUT and DOCKER-USER, IPv6 LOG/REJECT in both.
    assert len([x for x in left if x.startswith("-A")]) == 2 * 11 + 12
    assert f"harness-{run_id}-proxy" in left and f"harness-{run_id}-a" in left
    assert any(x.startswith("/dev/loop") for x in left), left  # an arm's disk, still mounted
    cleanup = subprocess.run(
        [*HARNESS, "cleanup", "--run-dir", str(tmp_path)], cwd=REPO, capture_output=True, text=True
    )
    assert cleanup.returncode == 0, cleanup.stderr
    assert "removed" in cleanup.stdout
    assert leftovers(docker_engine, run_id) == []


def write_sleeper_study(tmp_path: Path) -> Path:
    """One arm, one item, one 6-second turn (tests/toy_arms/study_arm.py)."""
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    shutil.copy(REPO / "tests" / "toy_arms" / "study_arm.py", study_dir / "study_arm.py")
    item = {"id": "slow", "clock": "2024-05-01T10:00:00Z", "turns": [{"user": "sleep 6"}]}
    study = StudyBuilder(name="kill", items=[item]).arm("sleeper", "python study_arm.py")
    study.set(ledger="ledger.jsonl").write(study_dir)
    return study_dir


def wait_until_ready(arm_log: Path) -> None:
    deadline = time.monotonic() + 60
    while "seam ready" not in (arm_log.read_text() if arm_log.exists() else ""):
        assert time.monotonic() < deadline, "the arm never became ready"
        time.sleep(0.1)


def test_killed_arm_container_is_an_infra_failure_retried(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> None:
    study_dir = write_sleeper_study(tmp_path)
    runs = tmp_path / "runs"
    process = run_harness(
        "record", str(study_dir / "study.toml"), "--isolation", "docker", "--run-dir", str(runs)
    )
    try:
        (container,) = wait_for_arms(docker_engine, ["sleeper"]).values()
        wait_until_ready(runs / run_id_of(runs) / "logs" / "sleeper" / "arm.log")
        time.sleep(2)  # inside the 6-second turn: the orchestrator went on at once
        container.kill()
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    run_dir = runs / run_id_of(runs)
    header = json.loads((run_dir / "run.json").read_text())
    assert header["study"]["infra_failures"] == 1
    (turn,) = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    assert (turn["outcome"], turn["attempts"]) == ("done", 2)
    assert leftovers(docker_engine, run_dir.name) == []


def test_ctrl_c_settles_the_turn_and_removes_everything(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> None:
    study_dir = write_sleeper_study(tmp_path)
    runs = tmp_path / "runs"
    process = run_harness(
        "record", str(study_dir / "study.toml"), "--isolation", "docker", "--run-dir", str(runs)
    )
    try:
        wait_for_arms(docker_engine, ["sleeper"])
        wait_until_ready(runs / run_id_of(runs) / "logs" / "sleeper" / "arm.log")
        time.sleep(1.5)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, output
    run_dir = runs / run_id_of(runs)
    assert json.loads((run_dir / "run.json").read_text())["study"]["interrupted"] is True
    (turn,) = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    assert turn["outcome"] == "done"  # the turn in flight settled
    assert leftovers(docker_engine, run_dir.name) == []


def test_an_engine_that_hard_codes_vendor_hosts_reaches_the_proxy_from_its_container(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> None:
    """HTTPS_PROXY and the harness CA in the arm container: the official SDKs calling
    https://api.openai.com and https://api.anthropic.com land on the stubs, under the item's
    pinned 2024 clock; a host that is not a vendor is refused by the proxy and named."""
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    shutil.copy(REPO / "tests" / "toy_arms" / "hardcoded_arm.py", study_dir / "hardcoded_arm.py")
    turns = ["openai hello", "anthropic tell me a story", "fetch https://exfiltrate.example/x"]
    item = {"id": "i1", "clock": "2024-05-01T10:00:00Z", "turns": [{"user": t} for t in turns]}
    builder = StudyBuilder(name="hardcoded", items=[item]).set(on_stray="fail")
    study = builder.arm("engine", "python hardcoded_arm.py").write(study_dir)
    runs = tmp_path / "runs"
    process = run_harness("record", str(study), "--isolation", "docker", "--run-dir", str(runs))
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 1, output  # the refused host is a stray connection
    run_dir = runs / run_id_of(runs)
    lines = (run_dir / "turns.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines]
    assert texts[0] and texts[1] and not any(t.startswith("failed") for t in texts[:2]), texts
    assert texts[2].startswith("failed") and "403" in texts[2], texts
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
    assert [(c["arm"], c["vendor"], c["outcome"]) for c in calls] == [
        ("engine", "openai", "ok"),
        ("engine", "anthropic", "ok"),
    ]
    egress = [json.loads(line) for line in (run_dir / "egress.jsonl").read_text().splitlines()]
    assert [(e["arm"], e["destination"], e["source"]) for e in egress] == [
        ("engine", "exfiltrate.example:443", "proxy")
    ]
    assert leftovers(docker_engine, run_dir.name) == []
