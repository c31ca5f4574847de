"""What a live run needs is checked before anything starts (harness/run/live/live_checks.py): a cap
that is not plain dollars, a missing vendor key, a missing ledger repository or a ledger branch
gone missing while the ledger holds entries are each refused in one line naming what to fix,
with no run directory, lock file or ledger entry left behind."""

from __future__ import annotations

import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.live.live_checks import KEY_ENV, check_branch, check_keys
from ledger.git_branch import LedgerBranch
from ledger.ledger import Ledger
from tests.helpers.gate_studies import GATE_ARM
from tests.helpers.studies import harness
from tests.study_builder import StudyBuilder

NO_KEYS: dict[str, str | None] = {name: None for name in KEY_ENV.values()}


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("harness: error:")]


@pytest.mark.parametrize(("cap", "words"), [("abc", "is not an amount"), ("-5", "is negative"),
                                            ("$10", "no $ or USD")])  # fmt: skip
def test_a_live_cap_that_is_not_dollars_is_refused_before_a_run_directory(
    tmp_path: Path, cap: str, words: str
) -> None:
    study = StudyBuilder(name="cap").arm("toy", f"python {GATE_ARM}").write(tmp_path / "study")
    runs = tmp_path / "runs"
    done = harness("live", str(study), "--cap", cap, "--run-dir", str(runs))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = _errors(done.stderr)
    assert len(errors) == 1 and f"--cap {cap!r} " in errors[0] and words in errors[0], done.stderr
    assert not runs.exists() or list(runs.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--cap", "abc"], "--cap 'abc' is not an amount"),
        (["--cap", "$10"], "--cap '$10' is not an amount in USD"),
        (["--cap", "5", "--stage-cap", "-1"], "--stage-cap '-1' is negative"),
    ],
)
def test_a_live_proxy_serve_with_a_bad_cap_leaves_nothing(
    tmp_path: Path, args: list[str], words: str
) -> None:
    run_dir, ledger = tmp_path / "run", tmp_path / "ledger.jsonl"
    done = harness(
        "proxy", "serve", "--mode", "live", "--port", "0", "--run-dir", str(run_dir),
        "--ledger", str(ledger), *args, env={"OPENAI_API_KEY": "sk-test-key-0123456789"},
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = _errors(done.stderr)
    assert len(errors) == 1 and words in errors[0] and "harness_" not in errors[0], done.stderr
    assert not run_dir.exists() and list(tmp_path.iterdir()) == []  # no run.json, no lock


def test_a_live_proxy_serve_without_a_key_leaves_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = harness(
        "proxy", "serve", "--mode", "live", "--port", "0", "--cap", "1", "--run-dir",
        str(run_dir), "--ledger", str(tmp_path / "ledger.jsonl"), env=NO_KEYS,
    )  # fmt: skip
    assert done.returncode == 2
    errors = _errors(done.stderr)
    assert len(errors) == 1 and "no vendor key is set" in errors[0], done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_key_of_each_vendor_the_record_run_called_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    check_keys({"openai"})
    with pytest.raises(HarnessError, match=r"^ANTHROPIC_API_KEY is not set: .*called anthropic"):
        check_keys({"anthropic", "openai"})


def test_the_harness_names_the_keys_the_proxy_reads() -> None:
    from proxy.live.call import KEY_ENV as PROXY_KEY_ENV

    assert dict(PROXY_KEY_ENV) == KEY_ENV


def _ledger_with_entries(path: Path) -> Path:
    with Ledger(path) as ledger:
        ledger.open_stage("s", Decimal(1))
    return path


def test_a_missing_ledger_repository_is_refused(tmp_path: Path) -> None:
    branch = LedgerBranch(tmp_path / "nowhere.git", "harness-ledger")
    with pytest.raises(HarnessError, match=r"ledger_repo: ledger repository .* does not exist"):
        check_branch(branch, tmp_path / "ledger.jsonl", new_branch=False)


def test_a_missing_branch_is_refused_once_the_ledger_holds_entries(tmp_path: Path) -> None:
    repo = tmp_path / "ledger.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    branch = LedgerBranch(repo, "harness-ledgr")  # mistyped
    fresh = tmp_path / "fresh.jsonl"
    check_branch(branch, fresh, new_branch=False)  # a new ledger: its history starts here
    used = _ledger_with_entries(tmp_path / "used.jsonl")
    with pytest.raises(HarnessError, match=r"'harness-ledgr' does not exist.*--new-ledger-branch"):
        check_branch(branch, used, new_branch=False)
    check_branch(branch, used, new_branch=True)  # asked for: a new history, knowingly
