"""`harness audit` re-checks the study's output guard (harness/checks/audit/guard.py): where the
study has a [guard], a turn with text and no verdict is named; the guard's calls are noted with
their cost; a study without a guard asks for nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.checks.audit.guard import guard_findings
from rundir.calls.calllog import CallRecord
from rundir.runs.header import read_header
from tests.helpers.report_runs import call, turn, write_run

GUARDED = '[guard]\ncommand = ["python", "guard.py"]\n'


def _run(tmp_path: Path, study_text: str, verdicts: list[str | None]) -> Path:
    study = tmp_path / "study.toml"
    study.write_text(study_text)
    run = "r"
    turns = [turn(run, "a", f"i{n}", 0) for n in range(len(verdicts))]
    for t, verdict in zip(turns, verdicts, strict=True):
        t.guard = verdict  # type: ignore[assignment]
    calls = [call(run, 1, "a", "i0", 0), call(run, 2, "a", "i0", 0, cost="0.25", purpose="guard")]
    return write_run(tmp_path / "runs", run, ["a"], turns, calls, study_path=str(study))


def _findings(
    run_dir: Path, study_sha: str | None = None
) -> tuple[list[tuple[str, str]], list[str]]:
    """The findings as the audit gets them, with run.json hashing the study file as it is now
    (write_run's header hashes no real file) unless `study_sha` says otherwise."""
    header = read_header(run_dir)
    assert header.study is not None
    header.study.study_sha256 = (
        study_sha or hashlib.sha256(Path(header.study.study_path).read_bytes()).hexdigest()
    )
    lines = (run_dir / "calls.jsonl").read_text().splitlines()
    calls = [(n, CallRecord.model_validate_json(line)) for n, line in enumerate(lines, 1)]
    return guard_findings(run_dir, header, calls)


def test_every_verdict_present_passes_and_the_guard_calls_are_noted(tmp_path: Path) -> None:
    found, notes = _findings(_run(tmp_path, GUARDED, ["pass", "fail", "error"]))
    assert found == []
    assert notes == [
        "guard: 1 call(s) with purpose guard, $0.25, re-priced and matched to the ledger "
        "with the others"
    ]


def test_a_turn_without_its_verdict_is_named(tmp_path: Path) -> None:
    found, _ = _findings(_run(tmp_path, GUARDED, ["pass", None, "fail"]))
    assert found == [
        (
            "turns.jsonl:2 (a, i1, turn 0)",
            "the study has a [guard] but this turn's text carries no guard verdict",
        )
    ]


def test_every_verdict_deleted_is_still_named_by_the_study_file(tmp_path: Path) -> None:
    found, _ = _findings(_run(tmp_path, GUARDED, [None, None]))
    assert [where for where, _ in found] == [
        "turns.jsonl:1 (a, i0, turn 0)",
        "turns.jsonl:2 (a, i1, turn 0)",
    ]


def test_a_study_without_a_guard_asks_for_no_verdict(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, 'name = "s"\n', [None, None])
    (run_dir / "calls.jsonl").write_text(call("r", 1, "a", "i0", 0).to_line())
    assert _findings(run_dir) == ([], [])


def test_a_changed_study_file_falls_back_to_what_the_run_shows(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, GUARDED, ["pass", None])
    found, notes = _findings(run_dir, study_sha="0" * 64)  # not the file run.json hashed
    assert [where for where, _ in found] == ["turns.jsonl:2 (a, i1, turn 0)"]
    assert notes[-1] == "guard: the study file is gone or changed; its [guard] read from the run"
