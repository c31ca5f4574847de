"""A turn's record from how its attempt ended: what the arm answered, or why nothing was."""

from __future__ import annotations

from pathlib import Path

import pytest

from arms.client import Outcome, TurnResult, TurnTiming
from harness.run.turns.turn_records import AttemptRecords
from rundir.turns.turns import TurnLog, TurnRecord

RECORDS = AttemptRecords(run="r1", item="i1", arm="mem0", attempt=2)


def result(outcome: Outcome, text: str = "partial", error: str | None = None) -> TurnResult:
    timing = TurnTiming(sent=100.0, first_token=100.25, last_token=101.5, ended=101.5)
    return TurnResult(text, outcome, error, timing)


@pytest.mark.parametrize(
    ("outcome", "recorded"),
    [("done", "done"), ("cut", "cut"), ("error", "error"), ("broken", "error")],
)
def test_an_answer_keeps_its_text_and_timing_and_a_broken_stream_is_the_arms_error(
    outcome: Outcome, recorded: str
) -> None:
    record = RECORDS.answered(3, result(outcome, error="it broke" if outcome != "done" else None))
    assert (record.run, record.item, record.arm, record.turn) == ("r1", "i1", "mem0", 3)
    assert (record.outcome, record.text, record.attempts) == (recorded, "partial", 2)
    assert (record.first_token_s, record.last_token_s) == (0.25, 1.5)
    assert record.error == (None if outcome == "done" else "it broke")


def test_a_failed_turn_has_no_text_and_no_timing() -> None:
    record = RECORDS.failed(0, "stray_connection", "run halted: arm 'mem0' tried to reach x")
    assert (record.outcome, record.text, record.first_token_s, record.last_token_s) == (
        "stray_connection",
        "",
        None,
        None,
    )
    assert record.error == "run halted: arm 'mem0' tried to reach x" and record.attempts == 2


def test_giving_up_keeps_the_completed_turns_and_fails_only_the_rest() -> None:
    done = [RECORDS.answered(0, result("done")), RECORDS.answered(1, result("cut"))]
    rest = RECORDS.given_up(done, 4, "the arm died mid-turn")
    assert [(r.turn, r.outcome, r.error) for r in rest] == [
        (2, "infra_failed", "the arm died mid-turn"),
        (3, "infra_failed", "the arm died mid-turn"),
    ]
    assert RECORDS.given_up(done + rest, 4, "again") == []  # nothing left to fail


def test_the_records_are_what_turns_jsonl_reads_back(tmp_path: Path) -> None:
    log = TurnLog(tmp_path / "turns.jsonl")
    written = [RECORDS.answered(0, result("done")), RECORDS.failed(1, "error", "refused")]
    for record in written:
        log.append(record)
    log.close()
    lines = (tmp_path / "turns.jsonl").read_text().splitlines()
    assert [TurnRecord.model_validate_json(line) for line in lines] == written
