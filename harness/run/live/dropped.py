"""Arms a live run leaves out before any spend: the followers of cross-arm gate pairs that failed
(harness/checks/pair_gate.py), read from the passing gate that lets the live run start.

A pair's follower is dropped, its leader stays the candidate, and the run's header says which arm
and why (run.json `dropped_arms`). Asking for a dropped arm by name (`--arm C1`) is refused. A
gate.json with no result for a pair the study declares (written before the pair was declared, or
by an older harness) is refused too, as is an elements file changed since the gate (its SHA-256
is in gate.json; the study's hash does not cover it): the pair was never checked as it stands, so
nothing may be spent on it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.errors import HarnessError
from harness.study import Study
from rundir.runs import read_gate


def dropped_followers(study: Study, gate_path: Path) -> dict[str, str]:
    """follower -> why, for every declared pair the gate at `gate_path` failed."""
    pairs = study.file.gate.pairs
    if not pairs:
        return {}
    record = read_gate(gate_path)
    if record is None:
        raise HarnessError(f"{gate_path} does not parse", hint=f"run `harness gate {study.path}`")
    results = {(p.leader, p.follower, p.differ_by): p for p in record.pairs}
    dropped: dict[str, str] = {}
    for pair in pairs:
        result = results.get((pair.leader, pair.follower, pair.differ_by))
        if result is None:
            raise HarnessError(
                f"gate {record.gate_id} has no cross-arm result for {pair.leader} -> "
                f"{pair.follower} ({pair.differ_by})",
                hint=f"run `harness gate {study.path}` again: live mode spends nothing on a pair "
                "the gate did not check",
            )
        elements = study.path.parent / pair.differ_by
        now = hashlib.sha256(elements.read_bytes()).hexdigest() if elements.is_file() else ""
        if now != result.elements_sha256:
            raise HarnessError(
                f"{elements} changed since gate {record.gate_id} checked {pair.leader} -> "
                f"{pair.follower}",
                hint=f"run `harness gate {study.path}` again",
            )
        if not result.passed:
            first = result.failures[0] if result.failures else "no firing checked"
            dropped[pair.follower] = (
                f"cross-arm gate {record.gate_id}: {pair.follower}'s requests do not differ from "
                f"{pair.leader}'s by exactly the element ({first}); {pair.leader} is the candidate"
            )
    return dropped


def without_dropped(arms: list[str], wanted: list[str], dropped: dict[str, str]) -> list[str]:
    """The arms left to run; an arm asked for by name that the gate dropped is refused."""
    asked = [arm for arm in wanted if arm in dropped]
    if asked:
        raise HarnessError(
            f"--arm {', '.join(asked)}: dropped before any spend: {dropped[asked[0]]}",
            hint="fix the arm (or the elements file) and run `harness gate` again",
        )
    left = [arm for arm in arms if arm not in dropped]
    if not left:
        raise HarnessError("every arm asked for was dropped by the cross-arm gate")
    return left
