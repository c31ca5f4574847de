"""The ledger kept on a private git branch: one commit per settled run, each only appending.

The ledger's hash chain shows an edited line, but not a file rewritten whole with a new chain,
nor lines cut from its end. A copy of the file committed to a git branch after every run puts
its history where a rewrite shows: `verify_branch` walks the branch and requires every commit's
file to be a valid chain that only appended to its parent's, and the branch head to hold the
ledger's very lines.

Written with git's plumbing only (hash-object, mktree, commit-tree, update-ref): no checkout,
no working tree touched, no network, no push. The repository may be bare; it must exist (a
mistyped path must not quietly start a new history). The branch moves by compare-and-swap
(`update-ref NEW OLD`), so two writers cannot both extend the same parent.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ledger.errors import LedgerError
from ledger.state import LedgerState
from ledger.store import scan_lines

FILE = "ledger.jsonl"  # the ledger's name in every commit's tree
DEFAULT_BRANCH = "harness-ledger"
_ZERO = "0" * 40
# A commit needs a name; a machine that never configured git still commits (its own name wins).
_IDENTITY = {
    "GIT_AUTHOR_NAME": "harness",
    "GIT_AUTHOR_EMAIL": "harness@localhost",
    "GIT_COMMITTER_NAME": "harness",
    "GIT_COMMITTER_EMAIL": "harness@localhost",
}


@dataclass(frozen=True)
class LedgerBranch:
    repo: Path
    branch: str = DEFAULT_BRANCH

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"

    def describe(self) -> str:
        return f"branch {self.branch} of {self.repo}"


def from_environment(
    repo: str | None, branch: str | None, base: Path | None = None
) -> LedgerBranch | None:
    """The branch a study or the environment names ($HARNESS_LEDGER_GIT, $HARNESS_LEDGER_BRANCH
    override the study's `ledger_repo` / `ledger_branch`); None when no repository is named."""
    repo = os.environ.get("HARNESS_LEDGER_GIT") or repo
    branch = os.environ.get("HARNESS_LEDGER_BRANCH") or branch or DEFAULT_BRANCH
    if not repo:
        return None
    path = Path(repo).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return LedgerBranch(path, branch)


def _git(branch: LedgerBranch, *args: str, data: bytes | None = None, check: bool = True) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    for key, value in _IDENTITY.items():
        env.setdefault(key, value)
    try:
        done = subprocess.run(
            ["git", "-C", str(branch.repo), *args],
            input=data,
            capture_output=True,
            env=env,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LedgerError(f"git {args[0]} on {branch.repo}: {e}") from e
    if check and done.returncode != 0:
        why = " ".join(done.stderr.decode(errors="replace").split())
        raise LedgerError(f"git {args[0]} on {branch.repo} failed: {why}")
    return done.stdout.decode(errors="replace").strip()


def require_repo(branch: LedgerBranch) -> None:
    if not branch.repo.is_dir():
        raise LedgerError(
            f"ledger repository {branch.repo} does not exist: create it with "
            f"`git init --bare {branch.repo}`"
        )
    inside = _git(branch, "rev-parse", "--git-dir", check=False)
    if not inside:
        raise LedgerError(f"{branch.repo} is not a git repository")


def head(branch: LedgerBranch) -> str | None:
    """The branch's commit, or None before its first."""
    found = _git(branch, "rev-parse", "--verify", "-q", f"{branch.ref}^{{commit}}", check=False)
    return found or None


def _file_at(branch: LedgerBranch, commit: str) -> bytes:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(
        ["git", "-C", str(branch.repo), "cat-file", "blob", f"{commit}:{FILE}"],
        capture_output=True,
        env=env,
        timeout=60,
    )
    if done.returncode != 0:
        raise LedgerError(f"commit {commit[:12]} of {branch.describe()} holds no {FILE}")
    return done.stdout


def complete(data: bytes) -> bytes:
    """A ledger file's complete lines (a torn tail is not an entry yet)."""
    end = data.rfind(b"\n")
    return data[: end + 1] if end >= 0 else b""


def commit_ledger(branch: LedgerBranch, data: bytes, message: str) -> str | None:
    """Commit the ledger's bytes on the branch if they add entries; the new commit, or None
    when there was nothing new. Refuses (LedgerError) a file that does not extend the head's."""
    require_repo(branch)
    data = complete(data)
    parent = head(branch)
    before = _file_at(branch, parent) if parent else b""
    if not data.startswith(before):
        raise LedgerError(
            f"the ledger no longer starts with what {branch.describe()} holds at "
            f"{parent[:12] if parent else '-'}: it was rewritten; not committed"
        )
    if data == before:
        return None
    blob = _git(branch, "hash-object", "-w", "--stdin", data=data)
    tree = _git(branch, "mktree", data=f"100644 blob {blob}\t{FILE}\n".encode())
    commit = _git(branch, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
    _git(branch, "update-ref", "-m", "harness: ledger", branch.ref, commit, parent or _ZERO)
    return commit


@dataclass
class BranchReport:
    commits: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_branch(branch: LedgerBranch, ledger_data: bytes) -> BranchReport:
    """Every commit's file a valid chain that only appended to its parent's; the head's file
    the ledger's complete lines. Problems name the first commit at fault."""
    require_repo(branch)
    tip = head(branch)
    if tip is None:
        return BranchReport(0, [f"{branch.describe()} does not exist: no run was committed"])
    listing = _git(branch, "rev-list", "--reverse", "--first-parent", tip)
    commits = listing.split()
    problems: list[str] = []
    before = b""
    for commit in commits:
        data = _file_at(branch, commit)
        scan = scan_lines(
            data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"),
            LedgerState(),
            1,
            stop_at_first=True,
            may_tear=False,
        )
        if scan.problems:
            line, what = scan.problems[0]
            problems.append(f"commit {commit[:12]}: {FILE}:{line}: {what}")
            break
        if not data.startswith(before):
            line = _first_difference(before, data)
            problems.append(
                f"commit {commit[:12]} rewrote line {line} of {FILE} (it only may append)"
            )
            break
        before = data
    if not problems and before != complete(ledger_data):
        line = _first_difference(before, complete(ledger_data))
        problems.append(
            f"the ledger differs from {branch.describe()}'s head {commits[-1][:12]} from line "
            f"{line} on (a run not committed yet, or a rewrite)"
        )
    return BranchReport(len(commits), problems)


def _first_difference(old: bytes, new: bytes) -> int:
    a, b = old.split(b"\n"), new.split(b"\n")
    for i, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x != y:
            return i
    return min(len(a), len(b))


def ledger_bytes(location: Path | str) -> bytes:
    """The ledger's complete lines as the file holds them (a PostgreSQL ledger's rows are the
    very lines a file would hold)."""
    from ledger.ledger import entry_lines, is_url

    if is_url(location):
        return b"".join(line + b"\n" for line in entry_lines(location) if line)
    return complete(Path(location).read_bytes()) if Path(location).is_file() else b""
