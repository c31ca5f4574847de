"""Every shipped arm places a handed turn context where the design says (issue 36 item 2): B's
context, handed over the seam (`addon_from`), is a system prompt of the receiver's turn, once,
never in the user's message. A coupled study on the local backend with the toy B as the source
and the shipped bare, retrieval and Node example arms as receivers (mem0 and graphiti share
arms/engine.py's turn: tests/docker/test_engines.py runs them); `harness audit`'s prompt check
(the design's V2, harness/checks/audit/prompt.py) passes them and names an arm that drops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.checks.audit.prompt import placement_problem
from rundir.calls.packread import PackReader
from tests.helpers.studies import harness, only_run, read_jsonl, write_study
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration

STUDY_ARM = TOY_ARMS / "study_arm.py"
ITEMS = [
    {
        "id": f"item{n}",
        "clock": "2024-05-01T10:00:00",
        "turns": [{"user": "echo Hello there."}, {"user": "echo What did I say?"}],
    }
    for n in range(2)
]


def _python(module: str, **env: str) -> dict[str, object]:
    return {"command": f"python -m {module}", "env": {"ARM_MODEL": "gpt-4.1-mini", **env}}


def test_every_shipped_arm_holds_bs_context_in_its_system_prompt(
    node_dist: Path, tmp_path: Path
) -> None:
    arms = {
        "B": _python("arms.toy", ARM_ROLE="B", ARM_MAX_TOKENS="64"),
        "bare": _python("arms.bare", ARM_MAX_TOKENS="64"),
        "retrieval": _python("arms.retrieval", ARM_MAX_TOKENS="64"),
        "node": {
            "command": f"node {node_dist / 'dist' / 'example_arm.js'}",
            "env": {"ARM_MODEL": "gpt-4.1-mini", "ARM_MAX_TOKENS": "64"},
        },
        "drops": {"command": f"python {STUDY_ARM}", "env": {}},  # no model call at all
    }
    coupling = {"order": ["B"], "addon_from": "B"}
    study = write_study(tmp_path / "study", arms, ITEMS, deadline_ms=20000, coupling=coupling)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    turns = read_jsonl(run / "turns.jsonl")
    handed = {(t["item"], t["turn"]): t["addon_returned"] for t in turns if t["arm"] == "B"}
    pack = PackReader.open(run)
    calls = read_jsonl(run / "calls.jsonl")
    for arm in ("bare", "retrieval", "node"):
        mains = [c for c in calls if c["arm"] == arm and c["purpose"] == "main"]
        assert len(mains) == len(ITEMS) * 2
        for call in mains:
            body = json.loads(pack.get(call["request_body"]))
            context = handed[(call["item"], call["turn"])]
            assert context and placement_problem(context, body) is None, (arm, body)

    harness("audit", str(run))
    audit = json.loads((run / "audit.json").read_text())
    found = [d for d in audit["discrepancies"] if d["check"] == "turn_context"]
    named = {d["where"].split("(", 1)[1].split(",")[0] for d in found}
    assert named == {"drops"} and len(found) == len(ITEMS) * 2, found
    assert all("made no main call" in d["detail"] for d in found)


HANDED = "For turn 1: answer in at most 16 words."


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"messages": [{"role": "system", "content": f"Base.\n\n{HANDED}"}]}, None),
        ({"system": [{"type": "text", "text": HANDED}], "messages": []}, None),
        ({"instructions": f"Base. {HANDED}", "input": "hi"}, None),
        (
            {"messages": [{"role": "developer", "content": [{"type": "text", "text": HANDED}]}]},
            None,
        ),
        ({"messages": [{"role": "system", "content": "Base."}]}, "does not hold"),
        (
            {"messages": [{"role": "system", "content": "B"}, {"role": "user", "content": HANDED}]},
            "in a user message",
        ),
        ({"system": f"{HANDED}\n{HANDED}", "messages": []}, "2 times"),
    ],
)
def test_placement_on_every_route_shape(body: dict[str, object], problem: str | None) -> None:
    found = placement_problem(HANDED, body)
    assert (found is None) if problem is None else (found is not None and problem in found)
