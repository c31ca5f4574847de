"""V0 (harness/run/live/suite_record.py): live mode needs a record of the integration suite passing
on this very code, keyed by the git commit and the working tree's hash; `--skip-suite` runs anyway
and run.json says so."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.live.suite_record import RECORD_NAME, SKIPPED, check_suite, write_record
from tests.helpers.gate_studies import GATE_ARM
from tests.helpers.studies import harness
from tests.study_builder import StudyBuilder


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "checkout"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "code.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("runs/\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    return repo


@pytest.fixture(autouse=True)
def _the_check_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    # tests/conftest.py skips V0 for every other live test; these test the check itself.
    monkeypatch.delenv("HARNESS_SKIP_SUITE", raising=False)


def test_a_pass_recorded_on_this_tree_lets_live_start_and_any_edit_does_not(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    with pytest.raises(HarnessError, match=r"^V0: no record of the integration suite passing"):
        check_suite(False, repo)  # never tested
    write_record("scripts/test", repo)
    assert (repo / ".git" / RECORD_NAME).is_file()  # in the git directory, not the tree
    assert check_suite(False, repo).startswith("passed on commit ")
    (repo / "runs").mkdir()
    (repo / "runs" / "output.json").write_text("{}")  # ignored files are not the code
    assert check_suite(False, repo).startswith("passed on commit ")
    for change in ("code.py", "new_module.py"):  # an edit, and a file the tests never saw
        (repo / change).write_text("x = 2\n")
        with pytest.raises(HarnessError, match="--skip-suite"):
            check_suite(False, repo)
        if change == "code.py":
            (repo / change).write_text("x = 1\n")  # back to the tested bytes: passes again
            assert check_suite(False, repo).startswith("passed on commit ")
    assert check_suite(True, repo) == SKIPPED


def test_a_forged_or_damaged_record_counts_as_none(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".git" / RECORD_NAME).write_text('{"trees": {"not-this-tree": {}}}')
    with pytest.raises(HarnessError, match="V0"):
        check_suite(False, repo)
    (repo / ".git" / RECORD_NAME).write_text("{not json")
    with pytest.raises(HarnessError, match="V0"):
        check_suite(False, repo)


def test_live_without_the_record_is_refused_before_a_run_directory(tmp_path: Path) -> None:
    """This checkout's own tree has no pass recorded while it is being edited and tested."""
    study = StudyBuilder(name="v0").arm("toy", f"python {GATE_ARM}").write(tmp_path / "study")
    runs = tmp_path / "runs"
    done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs),
                   env={"HARNESS_SKIP_SUITE": None})  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1 and "V0: no record of the integration suite" in errors[0]
    assert "--skip-suite" in errors[0] and not runs.exists()
