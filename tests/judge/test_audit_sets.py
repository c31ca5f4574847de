"""`harness audit RUN_DIR` re-checks the judgment sets that judge the run: those beside it and those
given with --judgments; an edited vote, a missing prompt, answers changed after judging, or a set
of another run each fail the audit, naming the file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.checks.audit.run import audit_run
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from rundir.judgments.files import read_tasks
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A run, a set beside it that judges it, and another study's run."""
    root = tmp_path_factory.mktemp("audit")
    study = write_study(root / "study", items=3)
    run = write_run(root / "runs", study, "run-a")
    other = write_run(root / "elsewhere", study, "run-b")
    judges = write_judges(
        root / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b", "high")
    )
    out = root / "runs" / "set"
    run_stage(
        [run],
        write_rubrics(root / "rubrics", pairwise=False),
        judges,
        out,
        StageOptions(seed=2, settings=Settings(controls_per_kind=2), jobs=4),
    )
    return run, out, other


def _copy(tmp_path: Path, run: Path, set_dir: Path) -> tuple[Path, Path]:
    runs = tmp_path / "runs"
    shutil.copytree(run, runs / run.name)
    shutil.copytree(set_dir, runs / set_dir.name)
    seal = set_dir.with_name(f"{set_dir.name}.seal.json")  # the set is re-checked with its seal
    shutil.copy(seal, runs / seal.name)
    return runs / run.name, runs / set_dir.name


def _judgments(run: Path, given: list[Path] | None = None) -> list[tuple[str, str]]:
    record = audit_run(run, judgments=given)
    return [(d.where, d.detail) for d in record.discrepancies if d.check == "judgments"]


def test_a_set_beside_the_run_is_found_and_re_checks(judged: tuple[Path, Path, Path]) -> None:
    run, set_dir, _ = judged
    record = audit_run(run)
    assert [d for d in record.discrepancies if d.check == "judgments"] == []
    assert f"judgment sets re-checked: {set_dir}" in record.notes


def test_an_edited_vote_fails_the_audit_naming_the_votes_file(
    judged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, set_dir = _copy(tmp_path, *judged[:2])
    votes = set_dir / "votes.jsonl"
    lines = votes.read_text().splitlines()
    first = json.loads(lines[0])
    first["verdict"] = "OK" if first["verdict"] == "FLAG" else "FLAG"
    votes.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    found = _judgments(run)
    assert (str(votes), "votes.jsonl is not the file the manifest hashed") in found
    assert any(
        where == str(votes) and "the reply reads as accepted" in what for where, what in found
    )


def test_a_missing_prompt_fails_the_audit_naming_the_prompt_file(
    judged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, set_dir = _copy(tmp_path, *judged[:2])
    task = read_tasks(set_dir)[0]
    prompt = set_dir / "prompts" / f"{task.id}.txt"
    prompt.unlink()
    found = _judgments(run)
    assert [where for where, _ in found] == [str(prompt)]


def test_answers_edited_after_judging_fail_the_audit(
    judged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, _ = _copy(tmp_path, *judged[:2])
    turns = run / "turns.jsonl"
    turns.write_text(turns.read_text().replace("Lisbon", "Porto"))
    found = _judgments(run)
    assert len(found) == 1 and found[0][0] == str(turns)
    assert "answers changed after judging" in found[0][1]


def test_a_set_given_for_another_run_is_a_finding(judged: tuple[Path, Path, Path]) -> None:
    _, set_dir, other = judged
    found = _judgments(other, [set_dir])
    assert found == [(str(set_dir), "this judgment set does not judge run run-b")]


def test_harness_audit_takes_judgments_and_exits_1_on_a_tampered_set(
    judged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, set_dir = _copy(tmp_path, *judged[:2])
    # Moved away from the run: only --judgments brings it into the audit.
    away = tmp_path / "sets" / "moved"
    away.parent.mkdir()
    set_dir.rename(away)
    reply = next((away / "replies").iterdir())
    reply.write_text(reply.read_text() + "\n")

    def audit(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "harness.cli", "audit", str(run), *extra],
            capture_output=True,
            text=True,
            check=False,
        )

    unchecked = audit()  # not beside the run, not given: not checked
    assert unchecked.stdout.startswith("audit run-a:") and "judgments:" not in unchecked.stdout
    done = audit("--judgments", str(away))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"judgments: {away / 'replies' / reply.name}:" in done.stdout
