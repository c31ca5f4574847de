"""Engine parity as a study setting (issue 36 item 5, harness/study/parity.py): a `[parity]` block's
fields reach the memory arms it names over the seam and show in their captured requests (the
answer model, the output limit, the answer prompt, the number of memories recalled), run.json
records it, the audit finds a main call that does not hold to it, and an arm overriding it is
refused at load."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from arms.recall import recall_section
from harness.checks.audit.parity import parity_findings, recall_problem
from harness.errors import HarnessError
from harness.study import load_study
from rundir.calls.calllog import CallRecord
from rundir.calls.packread import PackReader
from rundir.runs.header import read_header
from tests.helpers.studies import harness, only_run, read_jsonl, write_study
from tests.toy_arms import TOY_ARMS

OWN_TOP_K = TOY_ARMS / "own_top_k_arm.py"
PARITY = {
    "arms": ["recall", "recall2"],
    "top_k": 2,
    "answer_model": "gpt-4.1-nano",
    "answer_max_tokens": 77,
    "answer_prompt": "You answer from what you remember of this user, briefly.",
}
ITEMS = [
    {
        "id": "pets",
        "clock": "2024-05-01T10:00:00",
        "turns": [
            {"user": "My cat is called Miso."},
            {"user": "My dog is called Tofu."},
            {"user": "My fish is called Nori."},
            {"user": "What are my pets called?"},
        ],
    }
]


def _arm(**env: str) -> dict[str, Any]:
    return {"command": "python -m arms.retrieval", "env": env}


def _study(folder: Path, parity: dict[str, Any], **recall_env: str) -> Path:
    # The arms' own defaults differ from the block: top-k 3, gpt-4.1-mini, 1024 tokens.
    arms = {"recall": _arm(**recall_env), "recall2": _arm(), "bare": _arm()}
    arms["bare"]["command"] = "python -m arms.bare"
    return write_study(folder, arms, ITEMS, deadline_ms=20000, parity=parity)


@pytest.mark.integration
def test_the_block_reaches_every_arm_under_it_and_the_audit_holds_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    study = _study(tmp_path / "study", PARITY)
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    assert read_header(run).study.parity == PARITY  # type: ignore[union-attr]
    pack = PackReader.open(run)
    mains = [c for c in read_jsonl(run / "calls.jsonl") if c["purpose"] == "main"]
    for arm in ("recall", "recall2"):
        calls = sorted((c for c in mains if c["arm"] == arm), key=lambda c: c["turn"])
        assert [c["model_requested"] for c in calls] == ["gpt-4.1-nano"] * 4
        recalled = []
        for call in calls:
            body = json.loads(pack.get(call["request_body"]))
            assert body["max_completion_tokens"] == 77
            system = body["messages"][0]["content"]
            assert system.startswith(PARITY["answer_prompt"])
            recalled.append(system.count("[turn "))
        assert recalled == [0, 1, 2, 2]  # top-k 2, not the arm's own 3
    bare = [c for c in mains if c["arm"] == "bare"]  # not under parity: its own model
    assert {c["model_requested"] for c in bare} == {"gpt-4.1-mini"}

    harness("audit", str(run))
    audit = json.loads((run / "audit.json").read_text())
    assert [d for d in audit["discrepancies"] if d["check"] == "parity"] == []
    header = read_header(run)
    lines = list(enumerate((CallRecord(**c) for c in read_jsonl(run / "calls.jsonl")), 1))
    assert parity_findings(header, lines, pack) == []
    forged = [(n, c.model_copy(update={"model_requested": "gpt-4.1"})) for n, c in lines]
    found = parity_findings(header, forged, pack)
    assert len(found) == 8 and all("[parity] fixes gpt-4.1-nano" in d for _, d in found)


@pytest.mark.integration
def test_the_audit_finds_an_arm_that_recalled_under_another_top_k(tmp_path: Path) -> None:
    """Top-k in the captured requests: `recall` takes the block but recalls 3, its own default
    (tests/toy_arms/own_top_k_arm.py); the audit names each of its calls that shows it."""
    runs = tmp_path / "runs"
    study = _study(tmp_path / "study", PARITY)
    text = study.read_text().replace(
        'command = "python -m arms.retrieval"', f'command = "{sys.executable} {OWN_TOP_K}"', 1
    )
    study.write_text(text)
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    harness("audit", str(run))
    audit = json.loads((run / "audit.json").read_text())
    found = [d for d in audit["discrepancies"] if d["check"] == "parity"]
    # Turn 0 recalls nothing; turns 1-3 show 1, 2 and 3 memories under top_k=3.
    assert len(found) == 3 and all("(seq" in d["where"] and "recall)" in d["where"] for d in found)
    assert {d["detail"] for d in found} == {"recalled under top_k=3, [parity] fixes top_k=2"}


def test_a_request_showing_more_memories_than_top_k_or_none_at_all_is_named() -> None:
    def body(system: str) -> dict[str, Any]:
        return {
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": "q"}]
        }

    three = recall_section("Recalled", ["a", "b", "c"], 2)
    assert recall_problem(body(three), 2) == (
        "shows 3 recalled memories, [parity] fixes top_k=2",
        True,
    )
    assert recall_problem(body(recall_section("Recalled", ["a"], 2)), 2) == (None, True)
    assert recall_problem(body("No memories here."), 2) == (None, False)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"ARM_TOP_K": "8"}, "ARM_TOP_K='8' but [parity] top_k = 2"),
        ({"ARM_MODEL": "gpt-4.1"}, "ARM_MODEL='gpt-4.1' but [parity] answer_model"),
        ({"ARM_MAX_TOKENS": "500"}, "ARM_MAX_TOKENS='500' but [parity] answer_max_tokens"),
    ],
)
def test_an_arm_overriding_the_block_is_refused_at_load(
    tmp_path: Path, env: dict[str, str], named: str
) -> None:
    with pytest.raises(HarnessError, match="invalid parity") as refused:
        load_study(_study(tmp_path, PARITY, **env))
    assert named in str(refused.value)


def test_an_arm_setting_the_same_value_loads(tmp_path: Path) -> None:
    study = load_study(_study(tmp_path, PARITY, ARM_TOP_K="2", ARM_MODEL="gpt-4.1-nano"))
    assert study.file.parity is not None and study.file.parity.top_k == 2


def test_a_block_naming_an_unknown_arm_or_fixing_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"parity\.arms: mem0 not an arm"):
        load_study(_study(tmp_path / "a", {**PARITY, "arms": ["recall", "mem0"]}))
    with pytest.raises(HarnessError, match="fixes nothing"):
        load_study(_study(tmp_path / "b", {"arms": ["recall", "recall2"]}))
