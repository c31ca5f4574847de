"""`ledger/git_branch.py` on a real git repository: commits by plumbing only (the work tree and
HEAD untouched), nothing new means no commit, a ledger that rewrote what the branch holds is
refused, and `verify_branch` names the first commit that rewrote a line, a commit whose file is
no valid chain, and a head that is not the ledger."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.errors import LedgerError
from ledger.git_branch import (
    LedgerBranch,
    commit_ledger,
    from_environment,
    ledger_bytes,
    verify_branch,
)
from ledger.ledger import Ledger, verify
from tests.pg_server import PgServer, running_server

IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
IDENTITY |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    env = {**os.environ, **IDENTITY}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, check=True, env=env
    )
    return done.stdout.decode().strip()


@pytest.fixture
def work_repo(tmp_path: Path) -> Path:
    """A non-bare repository with a checkout, to show the branch is written without it."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "notes.txt").write_text("mine\n")
    return repo


def _runs(ledger: Path, branch: LedgerBranch, n: int) -> list[str]:
    commits = []
    with Ledger(ledger) as led:
        led.open_stage("s", Decimal(10))
        for i in range(n):
            led.reserve_run(f"r{i}", Decimal(1), stage="s")
            led.settle_run(f"r{i}")
            commit = commit_ledger(branch, ledger.read_bytes(), f"run r{i}")
            assert commit is not None
            commits.append(commit)
    return commits


def test_each_run_is_one_commit_appending_and_the_checkout_is_untouched(
    work_repo: Path, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    branch = LedgerBranch(work_repo, "spend")
    commits = _runs(ledger, branch, 3)
    assert git(work_repo, "rev-list", "--reverse", "spend").split() == commits
    assert (
        git(work_repo, "status", "--porcelain") == "?? notes.txt"
    )  # nothing staged or checked out
    assert git(work_repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert commit_ledger(branch, ledger.read_bytes(), "again") is None  # nothing new
    report = verify_branch(branch, ledger.read_bytes())
    assert report.ok and report.commits == 3


def test_a_rewritten_ledger_is_not_committed(work_repo: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    branch = LedgerBranch(work_repo, "spend")
    _runs(ledger, branch, 2)
    rewritten = ledger.read_bytes().replace(b'"cap_usd":"1"', b'"cap_usd":"2"', 1)
    with pytest.raises(LedgerError, match="rewritten; not committed"):
        commit_ledger(branch, rewritten + b"", "forged")


def test_verify_names_the_commit_that_rewrote_a_line(work_repo: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    branch = LedgerBranch(work_repo, "spend")
    first, second, _third = _runs(ledger, branch, 3)
    # A new chain, hashes and all, that drops run r0's reservation: valid as a chain on its
    # own, but it rewrote what the first commit held.
    other = tmp_path / "other.jsonl"
    with Ledger(other) as led:
        led.open_stage("s", Decimal(99))
    blob = git(work_repo, "hash-object", "-w", "--stdin", data=other.read_bytes())
    tree = git(work_repo, "mktree", data=f"100644 blob {blob}\tledger.jsonl\n".encode())
    forged = git(work_repo, "commit-tree", tree, "-p", first, "-m", "forged")
    git(work_repo, "update-ref", "refs/heads/spend", forged)
    report = verify_branch(branch, other.read_bytes())
    assert report.problems == [
        f"commit {forged[:12]} rewrote line 1 of ledger.jsonl (it only may append)"
    ]
    assert second[:12] not in " ".join(report.problems)


def test_a_commit_whose_file_is_no_chain_is_named(work_repo: Path, tmp_path: Path) -> None:
    branch = LedgerBranch(work_repo, "spend")
    blob = git(work_repo, "hash-object", "-w", "--stdin", data=b'{"not": "an entry"}\n')
    tree = git(work_repo, "mktree", data=f"100644 blob {blob}\tledger.jsonl\n".encode())
    commit = git(work_repo, "commit-tree", tree, "-m", "junk")
    git(work_repo, "update-ref", "refs/heads/spend", commit)
    report = verify_branch(branch, b"")
    assert len(report.problems) == 1 and report.problems[0].startswith(f"commit {commit[:12]}:")


def test_a_missing_repository_is_refused_not_created(tmp_path: Path) -> None:
    branch = LedgerBranch(tmp_path / "nope.git", "spend")
    with pytest.raises(LedgerError, match="does not exist: create it with `git init --bare"):
        commit_ledger(branch, b"", "x")
    assert not (tmp_path / "nope.git").exists()


def test_the_environment_overrides_the_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_LEDGER_GIT", raising=False)
    monkeypatch.delenv("HARNESS_LEDGER_BRANCH", raising=False)
    assert from_environment(None, None) is None
    assert from_environment("../l.git", None, tmp_path) == LedgerBranch(
        tmp_path / "../l.git", "harness-ledger"
    )
    monkeypatch.setenv("HARNESS_LEDGER_GIT", "/srv/l.git")
    monkeypatch.setenv("HARNESS_LEDGER_BRANCH", "pilot")
    assert from_environment("../l.git", "x", tmp_path) == LedgerBranch(Path("/srv/l.git"), "pilot")


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    yield from running_server()


def test_a_postgres_ledger_is_committed_as_the_file_its_rows_make(
    pg: PgServer, work_repo: Path, tmp_path: Path
) -> None:
    url = pg.new_database()
    branch = LedgerBranch(work_repo, "spend")
    with Ledger(url) as led:
        led.open_stage("s", Decimal(10))
        led.reserve_run("r0", Decimal(1), stage="s")
        led.settle_run("r0")
    assert commit_ledger(branch, ledger_bytes(url), "run r0") is not None
    exported = tmp_path / "exported.jsonl"  # the rows, as `harness ledger export` writes them
    exported.write_bytes(ledger_bytes(url))
    assert verify(exported).entries == 3
    with Ledger(url) as led:
        led.reserve_run("r1", Decimal(1), stage="s")
        led.settle_run("r1")
    assert commit_ledger(branch, ledger_bytes(url), "run r1") is not None
    report = verify_branch(branch, ledger_bytes(url))
    assert report.ok and report.commits == 2
