"""The cross-arm gate: on the turn after each firing (harness/checks/elements.py), the follower's
main request must differ from its leader's by exactly the element's text.

Both requests come from one run's call log, masked as the determinism gate masks them
(harness/checks/masks.py) and compared as canonical JSON text: the follower's must be the
leader's with the element's text (JSON-escaped, as it stands in the body) inserted at one place,
and nothing else changed. The turn's first main call of each arm is compared (its later main
calls, a tool loop's, are not). Anything else fails the pair, named: a missing call, a request
with other differences, the element missing or added twice. A firing on an item's last turn has
no next turn in the run: nothing to check, and it is not counted.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import canonical
from harness.checks.body_diff import compared_view, first_difference, request_body
from harness.checks.elements import ElementsError, Firing, read_elements
from harness.study import GatePair
from rundir.calls import CallRecord, PackReader, read_calls
from rundir.runs import PairCheck
from rundir.turns import read_turns

_SHOWN = 80  # characters shown either side of a difference


def differs_by_exactly(leader: str, follower: str, element: str) -> bool:
    """Whether `follower` is `leader` with `element` inserted at one place."""
    if len(follower) != len(leader) + len(element):
        return False
    start = follower.find(element)
    while start != -1:
        if (
            follower[:start] == leader[:start]
            and follower[start + len(element) :] == leader[start:]
        ):
            return True
        start = follower.find(element, start + 1)
    return False


def check_pair(study_dir: Path, pair: GatePair, runs: list[Path], masks: list[str]) -> PairCheck:
    path = study_dir / pair.differ_by
    result = PairCheck(
        leader=pair.leader,
        follower=pair.follower,
        differ_by=pair.differ_by,
        elements_sha256=hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "",
        passed=False,
    )
    try:
        firings = read_elements(path)
    except ElementsError as e:
        result.failures.append(str(e))
        return result
    for run in runs:
        mains = _first_main_calls(run)
        pack = PackReader.open(run)
        ran = _turns_run(run)
        for firing in firings:
            if firing.item in ran and firing.turn + 1 not in ran[firing.item]:
                continue  # a firing on the item's last turn: no next turn, nothing to check
            why = _compare(firing, pair, mains, pack, masks)
            result.checked += 1
            if why is not None:
                result.failures.append(
                    f"run {run.name} item {firing.item} turn {firing.turn + 1}: {why}"
                )
    result.passed = not result.failures and result.checked > 0
    if result.checked == 0:
        result.failures.append(f"{pair.differ_by} names no firing: nothing was checked")
    return result


def _turns_run(run: Path) -> dict[str, set[int]]:
    """Per item, the turns the run's arms ran (turns.jsonl; none when it has no turn file)."""
    path = run / "turns.jsonl"
    ran: dict[str, set[int]] = defaultdict(set)
    for record in read_turns(path) if path.exists() else []:
        ran[record.item].add(record.turn)
    return ran


def _first_main_calls(run: Path) -> dict[tuple[str, str, int], CallRecord]:
    path = run / "calls.jsonl"
    by_turn: dict[tuple[str, str, int], list[CallRecord]] = defaultdict(list)
    for call in read_calls(path) if path.exists() else []:
        if call.purpose == "main" and call.item is not None and call.turn is not None:
            by_turn[(call.arm, call.item, call.turn)].append(call)
    return {key: min(calls, key=lambda c: c.seq) for key, calls in by_turn.items()}


def _compare(
    firing: Firing,
    pair: GatePair,
    mains: dict[tuple[str, str, int], CallRecord],
    pack: PackReader,
    masks: list[str],
) -> str | None:
    """Why the follower's request of the turn after `firing` is not the leader's plus the
    element, or None when it is."""
    turn = firing.turn + 1
    texts: list[str] = []
    for arm in pair.arms:
        call = mains.get((arm, firing.item, turn))
        if call is None:
            return f"{arm} made no main call in that turn"
        try:
            body = request_body(pack, call)
        except (KeyError, ValueError) as e:
            return f"{arm}'s request body cannot be read: {e}"
        texts.append(canonical.dumps(compared_view(call, body, masks)).decode("utf-8"))
    leader, follower = texts
    element = canonical.dumps(firing.element).decode("utf-8")[1:-1]  # as it stands in the body
    if differs_by_exactly(leader, follower, element):
        return None
    if leader == follower:
        return f"{pair.follower}'s request is {pair.leader}'s: the element is not in it"
    at = first_difference(leader, follower)
    return (
        f"{pair.follower}'s request differs from {pair.leader}'s by other than the element, at "
        f"character {at}: {leader[max(0, at - 20) : at + _SHOWN]!r} -> "
        f"{follower[max(0, at - 20) : at + _SHOWN]!r}"
    )
