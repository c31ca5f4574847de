"""V0 (study design 4.7): live mode spends money only on code whose integration suite passed.

`scripts/test`, after the whole suite passed, writes a record keyed by the checkout's git commit
and the hash of its working tree (what was tested, uncommitted edits included):
`python -m harness.run.live.suite_record`. `harness live` and `harness pilot` look the current
tree up before anything starts and refuse without a record; `--skip-suite` (or
HARNESS_SKIP_SUITE=1) runs anyway and run.json says so (`study.suite`), which the report lists as
a deviation.

The tree hash is `git write-tree` of the working tree read into a temporary index (the real
index and the work tree are not touched); the record lives in the repository's git directory
(`harness-suite.json`), so it is never part of the tree it describes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import HarnessError
from rundir.atomic import write_atomic

REPO = Path(__file__).resolve().parents[3]  # harness/run/live/ -> the checkout
RECORD_NAME = "harness-suite.json"
SKIP_FLAG = "--skip-suite"
SKIPPED = f"not checked: {SKIP_FLAG} (a deviation from V0: no record of the suite passing)"
KEPT = 50  # trees remembered; an old tree's record is of no use once the code moved on


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "GIT_TERMINAL_PROMPT": "0"},
        timeout=120,
    )
    if done.returncode != 0:
        raise HarnessError(
            f"cannot identify the harness's code for V0: git {args[0]}: "
            + " ".join(done.stderr.split()),
            hint=f"run from a git checkout of the harness, or pass {SKIP_FLAG}",
        )
    return done.stdout.strip()


def tree_key(repo: Path = REPO) -> tuple[str, str]:
    """(commit, tree): HEAD and the hash of the working tree as it is now."""
    commit = _git(repo, "rev-parse", "HEAD")
    with tempfile.TemporaryDirectory() as tmp:
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "read-tree", "HEAD", env=index)
        _git(repo, "add", "-A", env=index)
        tree = _git(repo, "write-tree", env=index)
    return commit, tree


def record_path(repo: Path = REPO) -> Path:
    return Path(_git(repo, "rev-parse", "--absolute-git-dir")) / RECORD_NAME


def _records(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {}  # unreadable: as if no suite had passed (fail closed)
    trees = data.get("trees") if isinstance(data, dict) else None
    return trees if isinstance(trees, dict) else {}


def write_record(command: str, repo: Path = REPO) -> dict[str, str]:
    """Record that the suite passed on this very tree (called once it did)."""
    commit, tree = tree_key(repo)
    path = record_path(repo)
    trees = _records(path)
    entry = {"commit": commit, "passed": datetime.now(UTC).isoformat(timespec="seconds")}
    entry["command"] = command
    trees.pop(tree, None)
    trees[tree] = entry
    kept = dict(list(trees.items())[-KEPT:])
    write_atomic(path, (json.dumps({"schema": 1, "trees": kept}, indent=1) + "\n").encode())
    return {"tree": tree, **entry}


def check_suite(skip: bool, repo: Path = REPO) -> str:
    """What run.json records under `study.suite`; HarnessError when no record matches."""
    # The flag, or its variable for callers that start a run without the CLI (the variable is
    # what the CLI's --skip-suite reads too): either way run.json records the deviation.
    if skip or os.environ.get("HARNESS_SKIP_SUITE", "") not in ("", "0"):
        return SKIPPED
    commit, tree = tree_key(repo)
    found = _records(record_path(repo)).get(tree)
    if found is None:
        raise HarnessError(
            f"V0: no record of the integration suite passing on this code (commit {commit[:12]}"
            f", tree {tree[:12]}): live mode spends money only on tested code; run "
            f"./scripts/test (it records a pass), or pass {SKIP_FLAG} (recorded as a deviation)"
        )
    return f"passed on commit {found['commit']}, tree {tree}, at {found['passed']}"


if __name__ == "__main__":
    done = write_record(" ".join(sys.argv[1:]) or "scripts/test")
    print(f"suite passed: recorded for tree {done['tree']} (commit {done['commit'][:12]})")
