"""Who owns a run's resources on the host, whichever backend made them.

Every resource of a run carries `harness.run=<id>` (a container's or network's label, or a
firewall rule's comment) and its owner `<pid>:<start>`, so `harness cleanup` after a crash removes
exactly what a dead run left, and never what a live one still uses.

`harness cleanup --run-dir ROOT` touches only the runs whose directories are under ROOT
(OwnedRuns): a resource of a run id found there whose owner is gone, and with `--force` also one
whose owner is alive if it is the harness that run's `pids.json` names. Another root's runs (a
shard on the same node) are never touched, live or not, `--force` or not.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.isolation import firewall, pids

RUN_LABEL = "harness.run"
OWNER_LABEL = "harness.owner"
# What makes a folder a run directory, crashed at any point after it was made.
RUN_DIR_MARKS = ("run.json", pids.FILE, "proxy.json", "logs")


def owner() -> str:
    """This harness process, as `pid:start` (a reused pid never passes for a live owner)."""
    return f"{os.getpid()}:{pids.start_time(os.getpid())}"


def owner_alive(value: str) -> bool:
    pid, _, start = value.partition(":")
    return pid.isdigit() and pids.start_time(int(pid)) == start


def rule_comment(run_id: str) -> str:
    """The comment on every firewall rule of a run: teardown and cleanup find them by it."""
    return f"{RUN_LABEL}={run_id} owner={owner()}"


def remove_rules(run_id: str) -> int:
    """Delete every iptables and ip6tables rule of `run_id`; returns how many."""
    return firewall.remove_where(lambda comment: comment.startswith(f"{RUN_LABEL}={run_id} "))


@dataclass(frozen=True)
class OwnedRuns:
    """The runs a `harness cleanup` was given: the run ids of the directories under its root,
    and the harness each names in its pids.json (while it has one)."""

    ids: frozenset[str]
    owners: Mapping[str, str] = field(default_factory=dict)  # run id -> "pid:start"

    def removable(self, run_id: str, who: str, force: bool) -> bool:
        """A resource of `run_id` owned by `who` may go: one of these runs', and its owner gone
        (or, with `force`, alive and the harness this run's directory names)."""
        if run_id not in self.ids:
            return False
        if not owner_alive(who):
            return True
        return force and self.owners.get(run_id) == who


def owned_runs(run_root: Path) -> OwnedRuns:
    """The runs under `run_root` (its run directories, or the root itself when it is one)."""
    if not run_root.is_dir():
        return OwnedRuns(frozenset())
    dirs = [run_root, *sorted(p for p in run_root.iterdir() if p.is_dir())]
    ids: set[str] = set()
    owners: dict[str, str] = {}
    for run_dir in dirs:
        if not any((run_dir / name).exists() for name in RUN_DIR_MARKS):
            continue
        ids.add(run_dir.name)
        try:
            data = json.loads((run_dir / pids.FILE).read_text())
            owners[run_dir.name] = f"{data['harness']['pid']}:{data['harness']['start']}"
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return OwnedRuns(frozenset(ids), owners)


def comment_run(comment: str) -> tuple[str, str] | None:
    """(run id, owner) of a rule's comment, or None for a rule not of a run."""
    if not comment.startswith(f"{RUN_LABEL}="):
        return None
    run, _, who = comment.removeprefix(f"{RUN_LABEL}=").partition(" owner=")
    return run, who


def remove_stale_rules(runs: OwnedRuns, force: bool, chain: Callable[[str], bool]) -> list[str]:
    """Delete the rules, in the chains `chain` accepts, of the given runs whose harness is gone
    (or, with `force`, is theirs: OwnedRuns.removable); a backend calls it for its own chains
    once its leftovers are stopped, so nothing of a crashed run runs unconfined."""

    def stale(comment: str) -> bool:
        found = comment_run(comment)
        return found is not None and runs.removable(found[0], found[1], force)

    removed = firewall.remove_where(stale, chain=chain)
    return [f"removed {removed} iptables/ip6tables rule(s) of crashed runs"] if removed else []
