"""The determinism gate: run a study in record mode twice and compare the requests.

Each run starts its own proxy and fresh arm processes through the same isolation backend as any
run (harness/run/pipeline.py), so nothing an arm remembers in memory carries over. The requests the
proxy received are then compared per arm, item, turn and call index (arrival order within the
turn), after removing the masked fields (harness/checks/masks.py). A turn whose calls are the same
but arrived in another order (concurrent calls) is counted, not failed: arrival order between
concurrent calls is the scheduler's, not the script's.

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
from harness.checks.masks import EXCLUDED_HEADERS, all_masks
from harness.checks.pinning import pinning_difference
from harness.run.pipeline import Isolation, RunRequest, RunResult, run_study
from harness.study import Study
from rundir.atomic import write_atomic
from rundir.calllog import CallRecord, read_calls
from rundir.gate_record import (
    GATE_FILE,
    Divergence,
    GateCounts,
    GateRecord,
    GateRequest,
    GateRun,
)
from rundir.header import new_run_id, now_iso
from rundir.packread import PackReader

RUNS = 2
_SHOWN = 160  # characters of a value shown in a diff line
TurnKey = tuple[str, str | None, int | None]


def run_gate(
    study: Study, run_root: Path, isolation: Isolation = "auto", allow_misses: bool = False
) -> tuple[GateRecord, Path]:
    """Run the study twice, compare, write `<run_root>/<gate id>/gate.json`. A run whose memory
    controls missed does not pass (so neither does the gate) unless `allow_misses`."""
    gate_id = new_run_id(f"{study.name}-gate")
    started = now_iso()
    results: list[RunResult] = []
    for _ in range(RUNS):
        request = RunRequest(
            study=study,
            mode="record",
            run_root=run_root,
            isolation=isolation,
            allow_misses=allow_misses,
        )
        results.append(run_study(request))
    masks = all_masks(study)
    counts = GateCounts()
    divergences = compare_runs(results[0].run_dir, results[1].run_dir, masks, counts)
    runs = [_gate_run(result) for result in results]
    # First: a difference in clock pinning explains the divergences that follow it.
    pinning = pinning_difference(*[(run.run_id, run.clock_pinning) for run in runs])
    why = [pinning] if pinning else []
    why += [
        f"run {run.run_id} did not pass (see its run.json)" for run in runs if not run.passed
    ] + [
        f"run {run.run_id}: {run.stray_connections} stray connection(s)"
        for run in runs
        if run.stray_connections
    ]
    images = [_images(result) for result in results]
    if images[0] != images[1]:
        why.append("the arms' images changed between the two runs")
    if divergences:
        why.append(f"{len(divergences)} request(s) differ between the two runs")
    assert results[0].header.study is not None
    record = GateRecord(
        gate_id=gate_id,
        study=study.name,
        study_path=str(study.path),
        study_sha256=study.study_sha256,
        compose_sha256=study.compose_sha256,
        items_sha256=study.items_sha256,
        images=images[0],
        started=started,
        ended=now_iso(),
        passed=not why,
        why=why,
        masks=masks,
        study_masks=list(study.file.mask),
        excluded_headers=list(EXCLUDED_HEADERS),
        runs=runs,
        counts=counts,
        divergences=divergences,
    )
    gate_dir = run_root / gate_id
    gate_dir.mkdir(parents=True, exist_ok=True)
    path = gate_dir / GATE_FILE
    # Durable as well as whole: a passing gate.json later authorises live spending.
    write_atomic(path, record.model_dump_json(by_alias=True, indent=2) + "\n")
    return record, path


def _gate_run(result: RunResult) -> GateRun:
    run = result.header.study
    calls = result.run_dir / "calls.jsonl"
    return GateRun(
        run_id=result.header.run_id,
        run_dir=str(result.run_dir),
        passed=bool(run and run.passed),
        stray_connections=run.stray_connections if run else 0,
        calls=sum(1 for _ in calls.open()) if calls.exists() else 0,
        clock_pinning=run.clock_pinning if run else None,
    )


def _images(result: RunResult) -> dict[str, str]:
    manifest = result.header.manifest
    return dict(manifest.images) if manifest else {}


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
