"""rundir/merge/pick.py: a folder of shard runs stands for, per shard, its latest run that passed
(else its latest finished one, else its latest), and every run left out is named with why."""

from __future__ import annotations

from pathlib import Path

from rundir.merge.pick import failure_reason, pick_runs
from rundir.runs.header import RunHeader, StudyRun, write_header
from rundir.runs.manifest import Manifest
from rundir.runs.shards import Shard


def _run(
    root: Path,
    name: str,
    index: int,
    *,
    started: str,
    passed: bool | None = True,
    sealed: bool = True,
    interrupted: bool = False,
    mode: str = "live",
    failures: dict[str, str] | None = None,
) -> Path:
    run_dir = root / name
    run_dir.mkdir(parents=True)
    study = StudyRun(
        name="s", study_path="s.toml", study_sha256="a" * 64, items_sha256="b" * 64,
        isolation="local", clock_pinning="seam-only", deadline_ms=1000, passed=passed,
        interrupted=interrupted, arm_failures=failures or {},
        shard=Shard(index=index, count=2, items=[f"i{index}"], of_items=2),
    )  # fmt: skip
    manifest = Manifest(written=started, tool_version="0") if sealed else None
    header = RunHeader(
        run_id=name, mode=mode, kind="study", started=started, study=study, manifest=manifest
    )  # type: ignore[arg-type]
    write_header(run_dir, header)
    return run_dir


def test_per_shard_the_latest_run_that_passed_is_taken_and_the_rest_named(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    one = _run(root, "r1", 1, started="2026-01-01T00:00:01")
    why = "completed no turn"
    failed = _run(root, "r2a", 2, started="2026-01-01T00:00:02", passed=False,
                  failures={"bare": why})  # fmt: skip
    killed = _run(root, "r2b", 2, started="2026-01-01T00:00:03", passed=None, sealed=False)
    passed = _run(root, "r2c", 2, started="2026-01-01T00:00:04")
    later_failed = _run(root, "r2d", 2, started="2026-01-01T00:00:05", passed=False)
    (root / "gate-record").mkdir()  # not a shard run: not considered
    taken, left = pick_runs([root])
    assert taken == [one, passed]
    assert {str(x) for x in left} == {
        f"{failed} (shard 2/2, failed: arm 'bare' {why}; r2c taken: passed)",
        f"{killed} (shard 2/2, unfinished (no manifest: killed, or still running); r2c taken: "
        "passed)",
        f"{later_failed} (shard 2/2, failed: did not pass (see its run.json); r2c taken: passed)",
    }


def test_with_no_passing_run_the_latest_finished_one_is_taken(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    one = _run(root, "r1", 1, started="2026-01-01T00:00:01")
    failed = _run(root, "r2a", 2, started="2026-01-01T00:00:02", passed=False)
    stopped = _run(root, "r2b", 2, started="2026-01-01T00:00:03", interrupted=True)
    taken, left = pick_runs([root])
    assert taken == [one, failed]  # the merged run then fails, saying why
    assert [x.run_dir for x in left] == [stopped]
    assert "interrupted; r2a taken: no run of it passed; the latest" in left[0].why


def test_shards_of_the_latest_mode_are_taken(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    old = [
        _run(root, f"rec{i}", i, started=f"2026-01-01T00:00:0{i}", mode="record") for i in (1, 2)
    ]
    new = [_run(root, f"live{i}", i, started=f"2026-01-02T00:00:0{i}") for i in (1, 2)]
    taken, left = pick_runs([root])
    assert taken == new and sorted(x.run_dir for x in left) == old
    assert "a record run; the live runs are taken" in left[0].why


def test_a_failure_reason_reads_the_run_s_own_words(tmp_path: Path) -> None:
    from rundir.runs.header import read_header

    run = _run(tmp_path, "r", 1, started="t", passed=False, failures={"a": "failed 3 of 4 turns"})
    assert failure_reason(read_header(run)) == "arm 'a' failed 3 of 4 turns"
