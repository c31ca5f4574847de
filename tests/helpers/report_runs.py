"""Run directories written with the harness's own record types (run.json, turns.jsonl,
calls.jsonl), for report tests that need outcomes a real arm would take minutes to produce
(turns cut at the deadline, items that failed for infrastructure reasons, 10,000 calls)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from rundir.calls.calllog import CallRecord, Timing, Tokens
from rundir.runs.header import RunHeader, StudyRun, write_header
from rundir.turns.turns import TurnOutcome, TurnRecord


def turn(
    run: str,
    arm: str,
    item: str,
    number: int,
    outcome: TurnOutcome = "done",
    last: float | None = 1.0,
    first: float | None = 0.5,
    text: str = "ok",
) -> TurnRecord:
    return TurnRecord(
        run=run,
        item=item,
        arm=arm,
        turn=number,
        text=text,
        outcome=outcome,
        first_token_s=first,
        last_token_s=last,
    )


def call(
    run: str,
    seq: int,
    arm: str,
    item: str | None,
    number: int | None,
    cost: str = "0.001",
    purpose: str = "main",
    chunks: list[int] | None = None,
    tokens: Tokens | None = None,
    timing: Timing | None = None,
) -> CallRecord:
    return CallRecord(
        run_id=run,
        seq=seq,
        mode="live",
        arm=arm,
        item=item,
        turn=number,
        purpose=purpose,
        vendor="openai",
        route="openai.chat",
        method="POST",
        path="/v1/chat/completions",
        model_requested="gpt-4.1-mini",
        model_served="gpt-4.1-mini",
        stream=True,
        status=200,
        outcome="ok",
        tokens=tokens or Tokens(input=100, output=20, cache_read=30, reasoning=5, source="vendor"),
        request_hash="0" * 64,
        response_chunks=chunks if chunks is not None else [40, 60],
        timing=timing or Timing(start=1.0, first_byte=1.1, end=1.5),
        cost_usd=Decimal(cost),
        reserved_usd=Decimal(cost) * 2,
    )


def write_run(
    folder: Path,
    run: str,
    arms: list[str],
    turns: list[TurnRecord],
    calls: list[CallRecord],
    deadline_ms: int = 10_000,
    study_path: str = "/srv/private-studies/study.toml",
    resumed_from: Path | None = None,
    finished: bool = True,
) -> Path:
    run_dir = folder / run
    run_dir.mkdir(parents=True)
    study = StudyRun(
        name="synthetic",
        study_path=study_path,
        study_sha256="a" * 64,
        items_sha256="b" * 64,
        isolation="local",
        clock_pinning="libfaketime",
        arms=arms,
        items=len({t.item for t in turns}),
        deadline_ms=deadline_ms,
        resumed_from=str(resumed_from) if resumed_from else None,
        passed=True if finished else None,  # filled in at a run's end (rundir/runs/header.py)
    )
    header = RunHeader(
        run_id=run,
        mode="live",
        kind="study",
        started="2026-12-01T00:00:00",
        ended="2026-12-01T01:00:00" if finished else None,
        study=study,
    )
    write_header(run_dir, header)
    (run_dir / "turns.jsonl").write_text(
        "".join(t.model_dump_json(by_alias=True) + "\n" for t in turns)
    )
    (run_dir / "calls.jsonl").write_text("".join(c.to_line() for c in calls))
    return run_dir
