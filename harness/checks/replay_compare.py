"""`replay.json`: does a replay reproduce the run it replayed? Same requests, same turn texts.

Requests are compared per arm, item, turn and call index on the proxy's request hash (the masked
request, rundir.calls.masking), so a divergence names the very call that changed. Calls an arm makes
concurrently within one turn (an embedding beside a completion) can reach the proxy in either
order; a turn whose requests are the same multiset in another order is noted as reordered, not
counted as a divergence, because the replay served each of them its own recorded answer.

Each request divergence carries a readable diff of the two masked bodies (harness/checks/
body_diff.py), and a difference in how the two runs pinned their arms' clocks is named first
(harness/checks/pinning.py): it alone can explain every divergence that carries a date.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.checks.body_diff import MISSING, body_diff, compared_view, diff_block, request_body
from harness.checks.pinning import pinning_difference
from rundir.atomic import write_atomic
from rundir.calls import DEFAULT_BODY_MASKS, CallRecord, PackReader, read_calls
from rundir.errors import RunDirError
from rundir.model import RunDirModel
from rundir.runs import read_header
from rundir.turns import read_turns

REPLAY_SCHEMA: Literal[1] = 1

# (arm, item, turn): calls outside any turn (an arm's start-up) have no item or turn.
TurnKey = tuple[str, str | None, int | None]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CallRef(_Model):
    request_hash: str
    route: str
    seq: int


class RequestDivergence(_Model):
    arm: str
    item: str | None
    turn: int | None
    index: int  # the call's position among its turn's calls, from 0
    recorded: CallRef | None  # None: the replay sent a call the recording does not have
    replayed: CallRef | None  # None: the replay did not send a call the recording has
    # A unified diff of the two masked bodies (harness/checks/body_diff.py); '' in replay.json
    # files written before it was added.
    body_diff: str = ""


class TurnDivergence(_Model):
    arm: str
    item: str
    turn: int
    recorded_text: str | None
    replayed_text: str | None
    recorded_outcome: str | None
    replayed_outcome: str | None


class Miss(_Model):
    arm: str
    item: str | None
    turn: int | None
    seq: int
    route: str
    request_hash: str


class TurnRef(_Model):
    arm: str
    item: str | None
    turn: int | None


class ReplayComparison(RunDirModel):  # replay.json
    schema_: Literal[1] = Field(REPLAY_SCHEMA, alias="schema")
    source_run: str
    replay_run: str
    clean: bool
    # "run A pinned clocks with libfaketime, run B seam-only ...", '' when they agree (or a
    # header does not say); the first finding, and a replay pinned otherwise is not clean.
    clock_pinning: str = ""
    calls_recorded: int
    calls_replayed: int
    turns_compared: int
    requests: list[RequestDivergence] = Field(default_factory=list)
    turns: list[TurnDivergence] = Field(default_factory=list)
    misses: list[Miss] = Field(default_factory=list)
    reordered: list[TurnRef] = Field(default_factory=list)


def _by_turn(calls: list[CallRecord]) -> dict[TurnKey, list[CallRecord]]:
    groups: dict[TurnKey, list[CallRecord]] = defaultdict(list)
    for call in sorted(calls, key=lambda c: c.seq):  # seq: the order calls arrived in
        groups[(call.arm, call.item, call.turn)].append(call)
    return groups


def _sort_key(key: TurnKey) -> tuple[str, str, int]:
    arm, item, turn = key
    return (arm, item or "", -1 if turn is None else turn)


def _ref(call: CallRecord | None) -> CallRef | None:
    if call is None:
        return None
    return CallRef(request_hash=call.request_hash, route=call.route, seq=call.seq)


def compare_requests(
    recorded: list[CallRecord], replayed: list[CallRecord]
) -> tuple[list[RequestDivergence], list[TurnRef]]:
    before, after = _by_turn(recorded), _by_turn(replayed)
    divergences: list[RequestDivergence] = []
    reordered: list[TurnRef] = []
    for key in sorted(before.keys() | after.keys(), key=_sort_key):
        old, new = before.get(key, []), after.get(key, [])
        old_hashes = [c.request_hash for c in old]
        new_hashes = [c.request_hash for c in new]
        if old_hashes == new_hashes:
            continue
        arm, item, turn = key
        if sorted(old_hashes) == sorted(new_hashes):
            reordered.append(TurnRef(arm=arm, item=item, turn=turn))
            continue
        for index in range(max(len(old), len(new))):
            a = old[index] if index < len(old) else None
            b = new[index] if index < len(new) else None
            if a is None or b is None or a.request_hash != b.request_hash:
                divergences.append(
                    RequestDivergence(
                        arm=arm,
                        item=item,
                        turn=turn,
                        index=index,
                        recorded=_ref(a),
                        replayed=_ref(b),
                    )
                )
    return divergences, reordered


def compare_turns(source: Path, replay: Path) -> tuple[int, list[TurnDivergence]]:
    before = {(t.arm, t.item, t.turn): t for t in read_turns(source / "turns.jsonl")}
    after = {(t.arm, t.item, t.turn): t for t in read_turns(replay / "turns.jsonl")}
    divergences = []
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a is not None and b is not None and (a.text, a.outcome) == (b.text, b.outcome):
            continue
        arm, item, turn = key
        divergences.append(
            TurnDivergence(
                arm=arm,
                item=item,
                turn=turn,
                recorded_text=a.text if a else None,
                replayed_text=b.text if b else None,
                recorded_outcome=a.outcome if a else None,
                replayed_outcome=b.outcome if b else None,
            )
        )
    return len(before.keys() | after.keys()), divergences


def compare_replay(source: Path, replay: Path, masks: list[str] | None = None) -> ReplayComparison:
    """`masks`: what the replay's proxy masked (harness.checks.masks.all_masks of the study),
    so the body diffs show what the request hashes covered; default the proxy's own."""
    recorded = _calls(source)
    replayed = _calls(replay)
    requests, reordered = compare_requests(recorded, replayed)
    _add_body_diffs(requests, (source, replay), (recorded, replayed), masks)
    pinning = pinning_difference(_pinning(source), _pinning(replay))
    turns_compared, turns = compare_turns(source, replay)
    misses = [
        Miss(
            arm=c.arm,
            item=c.item,
            turn=c.turn,
            seq=c.seq,
            route=c.route,
            request_hash=c.request_hash,
        )
        for c in sorted(replayed, key=lambda c: c.seq)
        if c.outcome == "replay_miss"
    ]
    return ReplayComparison(
        source_run=str(source),
        replay_run=str(replay),
        clean=not (requests or turns or misses or pinning),
        clock_pinning=pinning,
        calls_recorded=len(recorded),
        calls_replayed=len(replayed),
        turns_compared=turns_compared,
        requests=requests,
        turns=turns,
        misses=misses,
        reordered=reordered,
    )


def _add_body_diffs(
    divergences: list[RequestDivergence],
    run_dirs: tuple[Path, Path],
    calls: tuple[list[CallRecord], list[CallRecord]],
    masks: list[str] | None,
) -> None:
    if not divergences:
        return  # a clean replay reads no pack
    packs = [PackReader.open(run_dir) for run_dir in run_dirs]
    by_seq = [{c.seq: c for c in side} for side in calls]
    names = ("recorded", "replayed")
    for d in divergences:
        shown: list[object] = []
        labels: list[str] = []
        for n, ref in enumerate((d.recorded, d.replayed)):
            call = by_seq[n].get(ref.seq) if ref else None
            if call is None:
                shown.append(MISSING)
                labels.append(f"{names[n]}: no such call")
                continue
            try:
                body = request_body(packs[n], call)
            except (KeyError, ValueError) as e:
                body = f"(body unreadable: {e})"
            shown.append(
                compared_view(call, body, list(DEFAULT_BODY_MASKS) if masks is None else masks)
            )
            labels.append(f"{names[n]} {run_dirs[n].name} seq {call.seq}")
        d.body_diff = body_diff(shown[0], shown[1], labels[0], labels[1])


def _pinning(run_dir: Path) -> tuple[str, str | None]:
    """(run id, how it pinned clocks), the latter None when its run.json does not say."""
    try:
        header = read_header(run_dir)
    except RunDirError:
        return run_dir.name, None
    return header.run_id, header.study.clock_pinning if header.study else None


def _calls(run_dir: Path) -> list[CallRecord]:
    path = run_dir / "calls.jsonl"
    return read_calls(path) if path.exists() else []


def write_comparison(path: Path, comparison: ReplayComparison) -> None:
    write_atomic(
        path, json.dumps(comparison.model_dump(by_alias=True, mode="json"), indent=2) + "\n"
    )


def verdict_lines(comparison: ReplayComparison, limit: int = 10) -> list[str]:
    """A short human verdict: the counts, then the first few divergences, each locatable."""
    c = comparison
    if c.clean:
        head = (
            f"replay CLEAN: {c.calls_replayed} request(s) and {c.turns_compared} turn text(s) "
            "reproduced, no miss"
        )
        return [head + (f" ({len(c.reordered)} turn(s) reordered)" if c.reordered else "")]
    lines = [
        f"replay DIVERGED: {len(c.requests)} request divergence(s), {len(c.turns)} turn text "
        f"divergence(s), {len(c.misses)} miss(es)"
    ]
    if c.clock_pinning:
        lines.append(f"  clock pinning differs: {c.clock_pinning}")
    for d in c.requests[:limit]:
        where = f"arm {d.arm} item {d.item} turn {d.turn} call {d.index}"
        either = d.replayed or d.recorded
        route = either.route if either else "?"
        old = d.recorded.request_hash[:16] if d.recorded else "(none)"
        new = d.replayed.request_hash[:16] if d.replayed else "(none)"
        lines.append(f"  request {where} ({route}): recorded {old} replayed {new}")
        lines += diff_block(d.body_diff)
    for m in c.misses[:limit]:
        lines.append(
            f"  miss: arm {m.arm} item {m.item} turn {m.turn} ({m.route}) {m.request_hash}"
        )
    for t in c.turns[:limit]:
        lines.append(
            f"  turn arm {t.arm} item {t.item} turn {t.turn}: recorded {t.recorded_outcome} "
            f"{_short(t.recorded_text)} replayed {t.replayed_outcome} {_short(t.replayed_text)}"
        )
    return lines


def _short(text: str | None, width: int = 60) -> str:
    if text is None:
        return "(none)"
    return json.dumps(text if len(text) <= width else text[: width - 1] + "…")
