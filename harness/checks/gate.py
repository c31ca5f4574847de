"""The determinism gate's comparison of two record-mode runs of one study (harness/run/gate.py runs
them). The requests the proxy received are compared per arm, item, turn and call index (arrival
order within the turn), after removing the masked fields (harness/checks/masks.py). A turn whose
calls are the same but arrived in another order (concurrent calls) is counted, not failed: arrival
order between concurrent calls is the scheduler's, not the script's.

The comparison reads the raw request bodies back from each run's pack and masks them again here,
rather than trusting the proxy's request_hash alone, because a reader of a divergence needs the
two requests and the JSON path that differs, not two unequal hashes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

import canonical
from harness.checks.body_diff import (
    MISSING,
    body_diff,
    compared_view,
    first_difference,
    request_body,
)
from rundir.calls import CallRecord, PackReader, read_calls
from rundir.runs import Divergence, GateCounts, GateRequest

_SHOWN = 160  # characters of a value shown in a diff line
TurnKey = tuple[str, str | None, int | None]


# --- comparing -----------------------------------------------------------------------------


class _Side:
    """One run's calls, grouped by turn, with their bodies."""

    def __init__(self, run_dir: Path) -> None:
        path = run_dir / "calls.jsonl"
        self.calls = read_calls(path) if path.exists() else []
        self.pack = PackReader.open(run_dir)
        self.turns: dict[TurnKey, list[CallRecord]] = defaultdict(list)
        for call in sorted(self.calls, key=lambda c: c.seq):
            self.turns[(call.arm, call.item, call.turn)].append(call)

    def body(self, call: CallRecord) -> Any:
        """The request's JSON body (or its text when it is not JSON); raises on a bad pack."""
        return request_body(self.pack, call)

    def request(self, call: CallRecord, body: Any) -> GateRequest:
        return GateRequest(
            run_id=call.run_id,
            seq=call.seq,
            method=call.method,
            route=call.route,
            path=call.path,
            request_hash=call.request_hash,
            request_body=call.request_body,
            body=body,
        )


def _canonical(call: CallRecord, body: Any, masks: list[str]) -> bytes:
    return canonical.dumps(compared_view(call, body, masks))


def compare_runs(
    first: Path, second: Path, masks: list[str], counts: GateCounts
) -> list[Divergence]:
    """Every request that differs between two runs' call logs after masking."""
    sides = (_Side(first), _Side(second))
    keys = sorted(
        set(sides[0].turns) | set(sides[1].turns),
        key=lambda k: (k[0], k[1] or "", -1 if k[2] is None else k[2]),
    )
    counts.turns = len(keys)
    divergences: list[Divergence] = []
    for key in keys:
        calls = (sides[0].turns.get(key, []), sides[1].turns.get(key, []))
        try:
            bodies = ([sides[0].body(c) for c in calls[0]], [sides[1].body(c) for c in calls[1]])
        except (KeyError, ValueError) as e:
            divergences.append(_unreadable(key, str(e)))
            continue
        canon = [
            [_canonical(c, b, masks) for c, b in zip(calls[n], bodies[n], strict=True)]
            for n in (0, 1)
        ]
        counts.calls_compared += max(len(calls[0]), len(calls[1]))
        if canon[0] != canon[1] and sorted(canon[0]) == sorted(canon[1]):
            counts.reordered_turns += 1
            counts.calls_matching += len(canon[0])
            continue
        for index in range(max(len(calls[0]), len(calls[1]))):
            here = [index < len(calls[n]) for n in (0, 1)]
            if all(here) and canon[0][index] == canon[1][index]:
                counts.calls_matching += 1
                continue
            divergences.append(_divergence(key, index, sides, calls, bodies, masks, here))
    counts.divergences = len(divergences)
    return divergences


def _divergence(
    key: TurnKey,
    index: int,
    sides: tuple[_Side, _Side],
    calls: tuple[list[CallRecord], list[CallRecord]],
    bodies: tuple[list[Any], list[Any]],
    masks: list[str],
    here: list[bool],
) -> Divergence:
    arm, item, turn = key
    requests = [
        sides[n].request(calls[n][index], bodies[n][index]) if here[n] else None for n in (0, 1)
    ]
    kind: Literal["differs", "only_in_first", "only_in_second"]
    paths: list[str] = []
    shown = [
        compared_view(calls[n][index], bodies[n][index], masks) if here[n] else MISSING
        for n in (0, 1)
    ]
    names = [
        f"{side} run {calls[n][index].run_id} seq {calls[n][index].seq}"
        if here[n]
        else f"{side} run: no such call"
        for n, side in enumerate(("first", "second"))
    ]
    if not here[1]:
        kind, diff = "only_in_first", "the second run made no such call"
    elif not here[0]:
        kind, diff = "only_in_second", "the first run made no such call"
    else:
        lines = json_diff(shown[0], shown[1])
        # Paths in mask syntax (relative to the body), so they can go into the study's mask.
        paths = [path.removeprefix("body.") for path, _ in lines]
        kind, diff = (
            "differs",
            "\n".join(f"{p}: {d}" for p, (_, d) in zip(paths, lines, strict=True)),
        )
    return Divergence(
        arm=arm,
        item=item,
        turn=turn,
        index=index,
        kind=kind,
        paths=paths,
        diff=diff,
        body_diff=body_diff(shown[0], shown[1], names[0], names[1]),
        first=requests[0],
        second=requests[1],
    )


def _unreadable(key: TurnKey, why: str) -> Divergence:
    arm, item, turn = key
    return Divergence(
        arm=arm, item=item, turn=turn, index=0, kind="body_unreadable", diff=f"body: {why}"
    )


def json_diff(a: Any, b: Any, path: str = "") -> list[tuple[str, str]]:
    """(dotted path, what differs) for every leaf where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[tuple[str, str]] = []
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in b:
                out.append((sub, f"only in the first run: {_show(a[key])}"))
            elif key not in a:
                out.append((sub, f"only in the second run: {_show(b[key])}"))
            else:
                out += json_diff(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            sub = f"{path}.{i}" if path else str(i)
            if i >= len(b):
                out.append((sub, f"only in the first run: {_show(a[i])}"))
            elif i >= len(a):
                out.append((sub, f"only in the second run: {_show(b[i])}"))
            else:
                out += json_diff(a[i], b[i], sub)
        return out
    if a == b and type(a) is type(b):
        return []
    if isinstance(a, str) and isinstance(b, str):
        return [(path or "(body)", _string_diff(a, b))]
    return [(path or "(body)", f"{_show(a)} -> {_show(b)}")]


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _string_diff(a: str, b: str) -> str:
    """Two strings around their first difference: long prompts differ in a few characters."""
    start = first_difference(a, b)
    lo = max(0, start - 40)
    prefix = "..." if lo else ""
    return (
        f"differs at character {start}: {prefix}{_show(a[lo : lo + 100])} -> "
        f"{prefix}{_show(b[lo : lo + 100])}"
    )
