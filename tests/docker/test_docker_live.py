"""`harness live --isolation docker` against a fake vendor on this host: the turns complete with
the vendor's replies, every call is metered and booked to the arm that made it, the ledger's
chain and the run's audit pass, and the study's key stays in the proxy container.

The fake vendor (plain HTTP, as in tests/checks/audit/test_run.py: a study names no CA bundle)
listens on the default bridge's gateway address, a host address that the proxy container
reaches through its control network (not internal in live mode) and that no arm may reach
(docker/arm_rules.py's rules refuse every new connection from an arm subnet to the host). It answers
only requests carrying the study's keys, so a reply proves the proxy put the key in.

One module fixture runs the gate (two record runs in containers) and then the live run; the
tests read what it left.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.isolation.docker import network_gateway
from rundir.calls.packread import PackReader
from tests.docker.test_docker_backend import leftovers
from tests.fakevendor.records import ReceivedRequest, Served
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import harness, read_jsonl
from tests.proxy.live_helpers import STUDY_ANTHROPIC_KEY, STUDY_KEYS, STUDY_OPENAI_KEY
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ARMS = {"claude": "anthropic", "gpt": "openai"}  # arm -> the vendor its model belongs to
ITEMS = [
    {"id": "one", "clock": "2024-05-01T10:00:00Z", "turns": [{"user": "hi"}, {"user": "more"}]},
    {"id": "two", "clock": "2024-05-02T10:00:00Z", "turns": [{"user": "again"}]},
]
TURNS = sum(len(item["turns"]) for item in ITEMS)  # per arm


@dataclass
class LiveRun:
    run_dir: Path
    gate_runs: list[Path]
    ledger: Path
    requests: list[ReceivedRequest]
    served: list[Served]
    # container name -> its environment (KEY=value), as seen while the runs went on
    envs: dict[str, list[str]] = field(default_factory=dict)


def bridge_gateway(client: docker.DockerClient) -> str:
    """The host's address on the default bridge: reachable from any container with a route out.
    Read as the harness reads it (a fresh dockerd lists no gateway in the bridge's IPAM)."""
    del client  # the engine is up: the fixture that gave it checked
    return network_gateway("bridge")


def write_study(folder: Path, vendor_url: str) -> Path:
    """Two reference arms (arms.bare), one per vendor, with a small max_tokens to reserve."""
    study = StudyBuilder(name="docker-live", items=ITEMS)
    models = {"claude": "claude-haiku-4-5", "gpt": "gpt-4.1-mini"}
    for arm, model in models.items():
        study.arm(arm, "python -m arms.bare", ARM_MODEL=model, ARM_MAX_TOKENS="128")
    study.set(deadline_ms=30000, ledger="ledger.jsonl", pins={"temperature": 0})
    study.set(vendors={"anthropic": vendor_url, "openai": vendor_url})
    return study.write(folder)


class EnvWatcher:
    """Snapshots the environment of every harness container while it exists: arm containers are
    removed at the end of a run, so what they held is read while they run."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self.envs: dict[str, list[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> EnvWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _watch(self) -> None:
        api = self.client.api
        while not self._stop.wait(0.1):
            with contextlib.suppress(docker.errors.APIError):  # e.g. removed meanwhile: go on
                for summary in api.containers(filters={"label": "harness.run"}):
                    name = summary["Names"][0].lstrip("/")
                    if name not in self.envs:
                        config = api.inspect_container(summary["Id"])["Config"]
                        self.envs[name] = list(config["Env"])


@pytest.fixture(scope="module")
def images(docker_engine: docker.DockerClient) -> None:
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True), lambda line: None)


@pytest.fixture(scope="module")
def live_run(
    docker_engine: docker.DockerClient, images: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveRun]:
    base = tmp_path_factory.mktemp("docker-live")
    keys = {"anthropic": STUDY_ANTHROPIC_KEY, "openai": STUDY_OPENAI_KEY}
    vendor = FakeVendor(api_keys=keys)
    vendor.host = bridge_gateway(docker_engine)  # before start: it binds there
    runs = base / "runs"
    with vendor, EnvWatcher(docker_engine) as watcher:
        study = write_study(base / "study", vendor.url)
        for command in (["gate", str(study)], ["live", str(study), "--cap", "2"]):
            done = harness(
                *command, "--run-dir", str(runs), "--isolation", "docker", env=STUDY_KEYS
            )
            assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        vendor.wait_idle()
        requests, served = vendor.requests, vendor.served
    headers = {p.parent: json.loads(p.read_text()) for p in runs.glob("*/run.json")}
    (run_dir,) = [p for p, h in headers.items() if h["mode"] == "live"]
    gate_runs = [p for p, h in headers.items() if h["mode"] == "record"]
    envs = {
        name: env
        for name, env in watcher.envs.items()
        if any(name.startswith(f"harness-{run.name}-") for run in headers)
    }
    ledger = base / "study" / "ledger.jsonl"
    yield LiveRun(run_dir, gate_runs, ledger, requests, served, envs)


def test_the_turns_complete_with_the_vendors_replies(live_run: LiveRun) -> None:
    header = json.loads((live_run.run_dir / "run.json").read_text())
    assert header["study"]["isolation"] == "docker"
    assert header["study"]["passed"] is True
    assert (live_run.run_dir / "egress.jsonl").read_text() == ""
    turns = read_jsonl(live_run.run_dir / "turns.jsonl")
    assert Counter(t["arm"] for t in turns) == {arm: TURNS for arm in ARMS}
    assert all(t["outcome"] == "done" and t["text"] for t in turns), turns
    # Each arm's answers are the texts the fake vendor sent for its vendor's route, and nothing
    # else reached the vendor (the gate's record runs are answered by stubs).
    paths = {r.id: r.path for r in live_run.requests}
    assert len(live_run.requests) == len(ARMS) * TURNS
    assert all(s.outcome == "complete" and s.status == 200 for s in live_run.served)
    for arm, vendor in ARMS.items():
        route = "/v1/messages" if vendor == "anthropic" else "/v1/chat/completions"
        sent = Counter(s.text_sent for s in live_run.served if paths[s.request_id] == route)
        assert Counter(t["text"] for t in turns if t["arm"] == arm) == sent


def test_every_call_is_metered_and_booked_to_its_arm(live_run: LiveRun) -> None:
    calls = read_jsonl(live_run.run_dir / "calls.jsonl")
    assert len(calls) == len(ARMS) * TURNS
    assert all(c["mode"] == "live" and c["outcome"] == "ok" for c in calls), calls
    assert all(Decimal(c["cost_usd"]) > 0 for c in calls), [c["cost_usd"] for c in calls]
    # Attribution by listener: each arm's calls went to its own model's vendor.
    assert {(c["arm"], c["vendor"]) for c in calls} == set(ARMS.items())
    assert Counter(c["arm"] for c in calls) == {arm: TURNS for arm in ARMS}
    assert all(c["item"] and c["turn"] is not None for c in calls)
    # An item's first requests are the ones the gate's record runs sent (later turns carry the
    # vendor's earlier replies, which differ from the stubs'), with the study's pins applied.
    record = read_jsonl(live_run.gate_runs[0] / "calls.jsonl")
    assert sorted((c["arm"], c["item"], c["request_hash"]) for c in calls if c["turn"] == 0) == (
        sorted((c["arm"], c["item"], c["request_hash"]) for c in record if c["turn"] == 0)
    )
    assert all(r.body["temperature"] == 0 for r in live_run.requests)


def _ledger_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_ledger_books_the_spend_and_the_audit_passes(live_run: LiveRun) -> None:
    run_id = live_run.run_dir.name
    calls = read_jsonl(live_run.run_dir / "calls.jsonl")
    total = sum(Decimal(c["cost_usd"]) for c in calls)
    entries = _ledger_lines(live_run.ledger)
    settled = [
        Decimal(str(call["cost_usd"]))
        for e in entries
        if e["kind"] == "calls_settled"
        for call in e["fields"]["calls"]
        if call["run_id"] == run_id
    ]
    assert len(settled) == len(calls) and sum(settled) == total > 0
    (closed,) = [
        e for e in entries if e["kind"] == "run_settled" and e["fields"]["run_id"] == run_id
    ]
    assert Decimal(str(closed["fields"]["total_usd"])) == total

    verify = harness("ledger", "verify", "--ledger", str(live_run.ledger))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"ok, {len(entries)} entries" in verify.stdout
    audit = harness("audit", str(live_run.run_dir))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-3000:]
    record = json.loads((live_run.run_dir / "audit.json").read_text())
    assert record["passed"] and record["counts"]["settlements"] == len(calls)
    assert Decimal(str(record["totals"]["ledger_usd"])) == total


def test_the_key_reaches_the_vendor_and_no_run_file(live_run: LiveRun) -> None:
    secrets = [STUDY_ANTHROPIC_KEY, STUDY_OPENAI_KEY]
    # Every request reached the vendor with the study's key (the fake refuses any other).
    for request in live_run.requests:
        assert request.api_key in secrets, request.headers
    # No file of the runs (logs and the proxy's config included), no body in the live run's
    # pack and no line of the ledger holds a key.
    pack = PackReader.open(live_run.run_dir)
    assert pack.damage is None and pack.index
    texts = [pack.get(digest) for digest in pack.index]
    for run in [live_run.run_dir, *live_run.gate_runs]:
        texts += [p.read_bytes() for p in run.rglob("*") if p.is_file()]
    texts.append(live_run.ledger.read_bytes())
    for secret in secrets:
        assert not [t for t in texts if secret.encode() in t]


def test_arm_containers_never_held_the_key(live_run: LiveRun) -> None:
    """The key is passed to the proxy container only; arms get placeholders, in the gate's
    record runs as in the live run, though the harness had the keys in its environment."""
    secrets = [STUDY_ANTHROPIC_KEY, STUDY_OPENAI_KEY]
    for run in [live_run.run_dir, *live_run.gate_runs]:
        for arm in ARMS:
            env = live_run.envs.get(f"harness-{run.name}-{arm}")
            assert env is not None, f"arm {arm} of {run.name} was never seen running"
            assert not [v for v in env if any(s in v for s in secrets)], env
            placeholders = dict(v.split("=", 1) for v in env)
            assert placeholders["OPENAI_API_KEY"] and placeholders["ANTHROPIC_API_KEY"]
    proxy = live_run.envs[f"harness-{live_run.run_dir.name}-proxy"]
    assert {f"{name}={value}" for name, value in STUDY_KEYS.items()} <= set(proxy)
    # Record mode never forwards: the gate's proxies did not get the keys either.
    for run in live_run.gate_runs:
        gate_proxy = live_run.envs.get(f"harness-{run.name}-proxy")
        assert gate_proxy is not None, f"the proxy of {run.name} was never seen running"
        assert not [v for v in gate_proxy if any(s in v for s in secrets)], gate_proxy


def test_nothing_is_left_behind(live_run: LiveRun, docker_engine: docker.DockerClient) -> None:
    for run in [live_run.run_dir, *live_run.gate_runs]:
        assert leftovers(docker_engine, run.name) == []
