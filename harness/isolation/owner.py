"""Who owns a run's resources on the host, whichever backend made them.

Every resource of a run carries `harness.run=<id>` (a container's or network's label, or a
firewall rule's comment) and its owner `<pid>:<start>`, so `harness cleanup` after a crash removes
exactly what a dead run left, and never what a live one still uses.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from harness.isolation import firewall, pids

RUN_LABEL = "harness.run"
OWNER_LABEL = "harness.owner"


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


def remove_stale_rules(force: bool, chain: Callable[[str], bool]) -> list[str]:
    """Delete the rules, in the chains `chain` accepts, of runs whose harness is gone (every
    run's, with `force`); a backend calls it for its own chains once its leftovers are stopped,
    so nothing of a crashed run runs unconfined."""

    def stale(comment: str) -> bool:
        who = comment.rpartition("owner=")[2]
        return comment.startswith(f"{RUN_LABEL}=") and (force or not owner_alive(who))

    removed = firewall.remove_where(stale, chain=chain)
    return [f"removed {removed} iptables/ip6tables rule(s) of crashed runs"] if removed else []
