"""examples/engines in containers: real mem0 and Graphiti, and a TypeScript arm, beside `bare`.

The study runs as a user runs it (`harness record|gate|replay|audit`, docker backend, record
mode, the default stubs), and the tests read what the engines stored (each engine arm exports
its sessions' stores into RUN_DIR/logs/<arm>/store/), not only that the run passed.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.run.watch.strays import by_destination
from tests.helpers.studies import harness, header, read_jsonl
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "engines"
ITEMS = {item["id"]: item for item in read_jsonl(EXAMPLE / "items.jsonl")}


@pytest.fixture(scope="module")
def engine_images(docker_engine: docker.DockerClient) -> None:
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True, extras=("engines",)), lambda line: None)


def test_a_second_build_skips_the_engine_images(engine_images: None) -> None:
    from harness.images.build import BuildOptions, build_images
    from harness.images.engines import ENGINE_IMAGES
    from harness.images.image import ARM

    progress: list[str] = []
    build_images(BuildOptions(offline=True, extras=("engines",)), progress.append)
    text = "\n".join(progress)
    # The harness sources can change under a running test session (other work in the tree),
    # which rebuilds harness-arm and so its children; with it unchanged, nothing is rebuilt.
    if f"{ARM.tag}: up to date" in text:
        for spec in ENGINE_IMAGES:
            assert f"{spec.tag}: up to date" in text, text


def _docker(*args: str) -> tuple[int, str]:
    done = harness(*args, "--isolation", "docker")
    return done.returncode, done.stdout + done.stderr[-4000:]


def _new_run(runs: Path, before: set[Path]) -> Path:
    (run,) = [p for p in runs.iterdir() if (p / "run.json").exists() and p not in before]
    return run


@pytest.fixture(scope="module")
def recorded(engine_images: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("engine-runs")
    code, out = _docker("record", str(EXAMPLE / "study.toml"), "--run-dir", str(runs))
    assert code == 0, out
    return _new_run(runs, set())


def _store(run: Path, arm: str, item: str) -> dict[str, Any]:
    return dict(json.loads((run / "logs" / arm / "store" / f"{item}_1.json").read_text()))


def _said(item: str) -> list[str]:
    return [turn["user"] for turn in ITEMS[item]["turns"]]


def _misses(run: Path, arm: str) -> dict[tuple[str, int], list[str]]:
    return {
        (t["item"], t["turn"]): t["memory_miss"]
        for t in read_jsonl(run / "turns.jsonl")
        if t["arm"] == arm and t["memory_miss"] is not None
    }


def test_the_study_records_in_containers_and_every_arm_surfaces_the_facts(recorded: Path) -> None:
    study = header(recorded)["study"]
    assert study["passed"] and study["isolation"] == "docker", study
    assert study["outcomes"] == {"done": 4 * sum(len(i["turns"]) for i in ITEMS.values())}
    assert study["memory_miss"] == {"bare": 0, "graphiti": 0, "mem0": 0, "node-openai": 0}


def test_mem0_stores_the_users_facts_as_clean_memories(recorded: Path) -> None:
    for item in ITEMS:
        memories = [m["memory"] for m in _store(recorded, "mem0", item)["memories"]]
        facts = [said for said in _said(item) if not said.endswith("?")]
        # Each fact the user stated is a memory of its own, word for word: not the prompt, not
        # a stub's "Noted: ...", not nested JSON.
        for fact in facts:
            assert fact in memories, (item, memories)
        for memory in memories:
            assert any(memory in said or said in memory for said in _said(item)), memory


def test_graphiti_names_entities_from_the_text_and_finds_facts(recorded: Path) -> None:
    for item in ITEMS:
        store = _store(recorded, "graphiti", item)
        # Each episode is "user: <message>": a name is a phrase of it, never a word-list stub.
        text = " ".join(f"user: {said}" for said in _said(item)).casefold()
        names = [entity["name"] for entity in store["entities"]]
        assert names and all(name.casefold() in text for name in names), (item, names)
        facts = [fact["fact"] for fact in store["facts"]]
        assert any(fact in _said(item) for fact in facts), (item, facts)
    sister_names = {e["name"] for e in _store(recorded, "graphiti", "sister")["entities"]}
    assert {"Ana", "Lisbon"} <= sister_names


def test_the_typescript_arm_is_metered_like_the_python_arms(recorded: Path) -> None:
    calls = [c for c in read_jsonl(recorded / "calls.jsonl") if c["arm"] == "node-openai"]
    main = [c for c in calls if c["purpose"] == "main"]
    # One streamed chat call per turn, through the official openai SDK, attributed to its turn.
    turns = sorted((c["item"], c["turn"]) for c in main)
    expected = sorted((item, n) for item, i in ITEMS.items() for n in range(len(i["turns"])))
    assert turns == expected
    assert all(c["route"] == "openai.chat" and c["stream"] and c["status"] == 200 for c in main)
    assert all(c["tokens"]["input"] > 0 and c["tokens"]["output"] > 0 for c in main)
    texts = [t for t in read_jsonl(recorded / "turns.jsonl") if t["arm"] == "node-openai"]
    assert all(t["outcome"] == "done" and t["text"] for t in texts)


def test_gate_replay_and_audit_pass(recorded: Path) -> None:
    runs = recorded.parent
    before = set(runs.iterdir())
    code, out = _docker("replay", str(recorded), "--run-dir", str(runs))
    assert code == 0, out
    replayed = _new_run(runs, before)
    node = [c for c in read_jsonl(replayed / "calls.jsonl") if c["arm"] == "node-openai"]
    recorded_hashes = sorted(
        c["request_hash"] for c in read_jsonl(recorded / "calls.jsonl") if c["arm"] == "node-openai"
    )
    assert sorted(c["request_hash"] for c in node) == recorded_hashes
    audit = harness("audit", str(recorded))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-3000:]
    code, out = _docker("gate", str(EXAMPLE / "study.toml"), "--run-dir", str(runs))
    assert code == 0, out


def _variant(
    tmp_path: Path,
    arms: list[str],
    stubs: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> Path:
    """examples/engines with some arms, one item, extra stub rules and engine environment."""
    study = tmp_path / "engines"
    shutil.copytree(EXAMPLE, study)
    example = tomllib.loads((EXAMPLE / "study.toml").read_text())
    fields = {k: v for k, v in example.items() if k not in ("name", "items", "arms")}
    fields |= {"ledger": "ledger.jsonl", "on_stray": "fail"}
    builder = StudyBuilder(name=example["name"], items=[ITEMS["sister"]], arms=arms, stubs=stubs)
    path = builder.set(**fields).write(study)
    compose = (study / "compose.yaml").read_text()
    for key, value in (env or {}).items():
        compose = compose.replace(f'      {key}: "false"', f'      {key}: "{value}"')
    (study / "compose.yaml").write_text(compose)
    return path


def test_an_engine_that_stores_nothing_fails_its_memory_control(
    engine_images: None, tmp_path: Path
) -> None:
    # mem0's extractor is told there is nothing to remember: every turn still ends `done`.
    nothing = {
        "schema": 1,
        "rules": [
            {
                "name": "extract-nothing",
                "system_contains": "Memory Extractor",
                "reply": '{"memory": []}',
            }
        ],
    }
    runs = tmp_path / "runs"
    code, out = _docker(
        "record", str(_variant(tmp_path, ["mem0"], nothing)), "--run-dir", str(runs)
    )
    assert code == 1, out  # an arm that missed its memory controls fails the run
    run = _new_run(runs, set())
    assert _store(run, "mem0", "sister")["memories"] == []
    assert _misses(run, "mem0") == {("sister", 2): ["Lisbon", "nurse"]}
    assert header(run)["study"]["memory_miss"] == {"mem0": 1}
    assert "memory controls missed (turns per arm): mem0 1" in out
    assert "FAILED: memory controls missed: mem0 1" in out


def test_telemetry_left_on_fails_the_run_naming_each_destination(
    engine_images: None, tmp_path: Path
) -> None:
    on = {"MEM0_TELEMETRY": "true", "GRAPHITI_TELEMETRY_ENABLED": "true"}
    study = _variant(tmp_path, ["mem0", "graphiti"], env=on)
    runs = tmp_path / "runs"
    code, out = _docker("record", str(study), "--run-dir", str(runs))
    assert code == 1, out
    run = _new_run(runs, set())
    study_header = header(run)["study"]
    assert study_header["passed"] is False
    refused = study_header["refused"]
    # Both engines report to PostHog; every attempt is refused before a byte leaves.
    assert set(refused) == {"mem0", "graphiti"}, refused
    for arm, destinations in refused.items():
        assert any("posthog.com" in d for d in destinations), (arm, destinations)
        for destination, count in destinations.items():
            assert f"{arm} -> {destination}: {count}" in out
    egress = read_jsonl(run / "egress.jsonl")
    assert by_destination(egress) == refused
    # Attempts made after an arm's last turn (at exit) are its teardown's, named as such.
    teardown = study_header["teardown_strays"]
    assert teardown, study_header
    for arm, destinations in teardown.items():
        for destination, late in destinations.items():
            assert 0 < late <= refused[arm][destination]
            assert f"({late} at teardown)" in out
