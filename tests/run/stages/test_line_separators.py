"""Texts holding U+2028, U+2029 or U+0085 (valid raw in JSON; live models do emit them) pass
through the seam and every run file whole: str.splitlines() ends a line at each, which made the
arm's turn fail and run files read back as halves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.run.stages.resume import finished_pairs, turn_records
from harness.run.stages.workers import sort_turns
from harness.study import load_items
from rundir.turns.turns import read_turns
from tests.helpers.studies import REPO, harness

SEPARATED = "one\u2028two\u2029three\u0085four"


def _item(item_id: str, user: str) -> str:
    row = {"id": item_id, "clock": "2024-05-01T10:00:00", "turns": [{"user": user}]}
    return json.dumps(row, ensure_ascii=False)  # the separators raw, as an editor writes them


def test_an_items_file_with_raw_separators_loads_each_line_as_one_item(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(_item("a", SEPARATED) + "\n" + _item("b", "plain") + "\n", encoding="utf-8")
    items = load_items(path)
    assert [(item.id, item.turns[0].user) for item in items] == [("a", SEPARATED), ("b", "plain")]


def test_resume_and_the_worker_sort_read_turns_holding_separators(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(_item("b", "x") + "\n" + _item("a", "y") + "\n", encoding="utf-8")
    items = load_items(path)
    turns = tmp_path / "turns.jsonl"
    lines = [
        {"schema": 1, "run": "r", "item": item, "arm": "bare", "turn": 0, "text": SEPARATED,
         "outcome": "done"}
        for item in ("a", "b")
    ]  # fmt: skip
    turns.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    sort_turns(turns, items)  # the items' order: b before a
    assert [(t.item, t.text) for t in read_turns(turns)] == [("b", SEPARATED), ("a", SEPARATED)]
    assert finished_pairs(turn_records(tmp_path), items) == {("b", "bare"), ("a", "bare")}


@pytest.mark.integration
def test_the_quickstart_with_every_reply_holding_u2028_is_done_gated_and_replayed(
    tmp_path: Path,
) -> None:
    study_dir = tmp_path / "study"
    shutil.copytree(REPO / "examples" / "quickstart", study_dir)
    study = study_dir / "study.toml"
    study.write_text(
        study.read_text().replace('"../../ledger.jsonl"', '"ledger.jsonl"'), encoding="utf-8"
    )
    # Every text reply the stubs give holds U+2028 (and its kin), in its middle and at its end.
    (study_dir / "stubs.toml").write_text(
        "schema = 1\n[replies]\n"
        'main = ["Noted:\u2028$user_first_words\u2029 end\u2028"]\n'
        'utility = ["OK\u2028"]\n'
        "[[rules]]\n"
        'name = "recall"\n'
        'user_contains = "What do you remember"\n'
        'reply = "You told me:\u2028$user_first_words\u0085"\n',
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    gated = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert gated.returncode == 0, gated.stdout + gated.stderr[-3000:]
    assert "PASSED" in gated.stdout
    recorded = [p for p in runs.iterdir() if (p / "turns.jsonl").exists()]
    assert recorded
    for run in recorded:
        turns = read_turns(run / "turns.jsonl")
        assert len(turns) == 18 and {t.outcome for t in turns} == {"done"}, run
        assert all("\u2028" in t.text for t in turns)
    replayed = harness(
        "replay",
        str(recorded[0]),
        "--isolation",
        "local",
        env={"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""},
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr[-3000:]
    assert "replay CLEAN" in replayed.stdout
