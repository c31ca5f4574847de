"""The ledger on a private git branch, as a study uses it: after three `harness live` runs the
branch holds three commits, each only appending to the ledger file, and its head holds the
ledger; rewriting one line in an earlier commit's file (the history re-stacked on it, as a
forger would) makes `harness ledger verify` fail naming that commit. No checkout is touched."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import GATE_ARM, ITEMS
from tests.helpers.studies import harness, header
from tests.proxy.live_helpers import STUDY_KEYS
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

BRANCH = "spend"


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, check=True,
        env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"]},
    )  # fmt: skip
    return done.stdout.decode().strip()


def file_at(repo: Path, commit: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "cat-file", "blob", f"{commit}:ledger.jsonl"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    """(study folder, the bare repository, its work tree's clone) after three live runs."""
    base = tmp_path_factory.mktemp("ledger-branch")
    repo = base / "ledger.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    with FakeVendor() as vendor:
        study = StudyBuilder(
            name="branch-test",
            items=ITEMS,
            fields={"deadline_ms": 20000, "vendors": {"openai": vendor.url},
                    "ledger_repo": "../ledger.git", "ledger_branch": BRANCH, "stage_cap": "10"},
        ).arm("toy", f"python {GATE_ARM}").write(base / "study")  # fmt: skip
        runs = base / "runs"
        done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stderr[-3000:]
        for _ in range(3):
            done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs),
                           "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            assert "ledger committed" in done.stderr
    yield study.parent, repo, runs


def test_three_live_runs_leave_three_commits_that_only_append(
    three_runs: tuple[Path, Path, Path],
) -> None:
    folder, repo, runs = three_runs
    commits = git(repo, "rev-list", "--reverse", BRANCH).split()
    assert len(commits) == 3
    files = [file_at(repo, c) for c in commits]
    assert files[0] and files[0] < files[1] and files[1].startswith(files[0])
    assert files[2].startswith(files[1]) and len(files[2]) > len(files[1])
    assert files[2] == (folder / "ledger.jsonl").read_bytes()
    made = [p for p in runs.iterdir() if (p / "run.json").exists()]  # the gate's folder has none
    live_runs = [p.name for p in made if header(p)["mode"] == "live"]
    assert len(live_runs) == 3
    messages = [git(repo, "log", "-1", "--format=%s", c) for c in commits]
    assert sorted(m.removeprefix("ledger: run ").split()[0] for m in messages) == sorted(live_runs)
    assert git(repo, "ls-tree", "--name-only", commits[2]) == "ledger.jsonl"
    verified = harness("ledger", "verify", "--ledger", str(folder / "ledger.jsonl"),
                       "--git-repo", str(repo), "--git-branch", BRANCH)  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert "3 commits, each only appended" in verified.stdout


def test_a_line_rewritten_in_an_earlier_commit_is_caught_naming_it(
    three_runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder, original, _ = three_runs
    repo = tmp_path / "forged.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(original), str(repo)], check=True)
    first, second, third = git(repo, "rev-list", "--reverse", BRANCH).split()
    # The forger edits the first run's reservation as commit 2 holds it...
    data = file_at(repo, second)
    assert b'"cap_usd":"1"' in data
    forged = data.replace(b'"cap_usd":"1"', b'"cap_usd":"9"', 1)
    blob = git(repo, "hash-object", "-w", "--stdin", data=forged)
    tree = git(repo, "mktree", data=f"100644 blob {blob}\tledger.jsonl\n".encode())
    new_second = git(repo, "commit-tree", tree, "-p", first, "-m", "run 2")
    # ...and re-stacks commit 3 on it, so the branch's history still looks linear.
    new_third = git(repo, "commit-tree", f"{third}^{{tree}}", "-p", new_second, "-m", "run 3")
    git(repo, "update-ref", f"refs/heads/{BRANCH}", new_third)

    done = harness("ledger", "verify", "--ledger", str(folder / "ledger.jsonl"),
                   "--git-repo", str(repo), "--git-branch", BRANCH)  # fmt: skip
    assert done.returncode == 1
    assert f"commit {new_second[:12]}" in done.stderr and "BROKEN" in done.stderr
    assert new_third[:12] not in done.stderr  # the first commit at fault is the one named


def test_the_branch_head_must_hold_the_ledger(
    three_runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder, repo, _ = three_runs
    cut = tmp_path / "ledger.jsonl"  # the ledger with its last run's entries cut off
    lines = (folder / "ledger.jsonl").read_bytes().splitlines(keepends=True)
    cut.write_bytes(b"".join(lines[:-1]))
    done = harness("ledger", "verify", "--ledger", str(cut), "--git-repo", str(repo),
                   "--git-branch", BRANCH)  # fmt: skip
    assert done.returncode == 1 and "differs from branch spend" in done.stderr
