"""The determinism gate: run a study in record mode twice and compare the requests
(harness/checks/gate.py), writing gate.json.

Each run starts its own proxy and fresh arm processes through the same isolation backend as any
run (harness/run/pipeline.py), so nothing an arm remembers in memory carries over.
"""

from __future__ import annotations

from pathlib import Path

from harness.checks import EXCLUDED_HEADERS, all_masks, check_pair, compare_runs, pinning_difference
from harness.run.pipeline import Isolation, RunRequest, RunResult, run_study
from harness.study import Study
from rundir.atomic import write_atomic
from rundir.runs import GATE_FILE, GateCounts, GateRecord, GateRun, new_run_id, now_iso

RUNS = 2


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
    # The cross-arm gate (docs/coupled.md): in both runs; a failed pair drops its follower from
    # live runs, and does not fail this gate.
    run_dirs = [result.run_dir for result in results]
    pairs = [check_pair(study.path.parent, p, run_dirs, masks) for p in study.file.gate.pairs]
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
        pairs=pairs,
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
