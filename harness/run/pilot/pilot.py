"""`harness pilot STUDY --legs FILE --cap USD`: the live pilot, leg by leg, under one stage.

Before any spend: every leg's cost is projected from a passing record run of the study
(harness/run/pilot/pilot_cost.py), the legs are dropped in the legs file's fixed order until the
projection fits the cap (the first five never; harness/run/pilot/legs.py), and plan.json records it.
Then one ledger stage is opened with the cap, and each kept leg runs as an ordinary live run of
the study (the same path as `harness live`, harness/run/pipeline.py) restricted to the leg's
arms and items, its run cap what the stage has left: the ledger, not the projection, is what
bounds the spend. Last, unit_costs.json: per arm, the measured mean $ per turn, tokens and
cached tokens, from which the confirmatory study's ceiling is set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Literal

import structlog

from harness.errors import HarnessError
from harness.run.live import (
    check_live_needs,
    check_suite,
    dropped_followers,
    live_job,
    passing_record_run,
)
from harness.run.pilot.legs import Leg, LegsFile, check_against_study, leg_items, plan_drops
from harness.run.pilot.pilot_cost import (
    Projection,
    leg_calls,
    project_calls,
    record_calls,
    unit_costs,
)
from harness.run.stages import Isolation, RunRequest
from harness.study import Study
from ledger.errors import LedgerError
from ledger.ledger import Ledger
from ledger.live_job import LiveJob
from ledger.prices import load_prices
from rundir.atomic import write_atomic
from rundir.runs import passing_gate

log = structlog.get_logger("harness.pilot")

Basis = Literal["worst", "expected"]
PILOT_SCHEMA = 1


@dataclass
class LegResult:
    name: str
    run_dir: str | None = None
    passed: bool = False
    why: str = ""
    skipped: bool = False  # every arm of it dropped by the cross-arm gate: nothing to run


@dataclass
class PilotResult:
    out: Path
    stage: str
    kept: list[str]
    dropped: list[str]
    projections: dict[str, Projection]
    legs: list[LegResult] = field(default_factory=list)
    gate_dropped: dict[str, str] = field(default_factory=dict)  # arm -> why (cross-arm gate)

    @property
    def passed(self) -> bool:
        done = all(leg.passed or leg.skipped for leg in self.legs)
        return done and len(self.legs) == len(self.kept)


def _money(value: Decimal) -> str:
    return str(value.quantize(Decimal("0.000001")))


def leg_arms(study: Study, leg: Leg, gate_dropped: dict[str, str]) -> list[str]:
    """The arms a leg runs: its own (default all), less those the cross-arm gate dropped."""
    return [arm for arm in (leg.arms or list(study.arms)) if arm not in gate_dropped]


def plan(
    study: Study,
    legs: LegsFile,
    record_run: Path,
    cap: Decimal,
    basis: Basis,
    gate_dropped: dict[str, str] | None = None,
) -> tuple[dict[str, Projection], list[str], list[str]]:
    """Each leg's projection, then (kept, dropped): nothing has started or been spent."""
    ids = [item.id for item in study.items]
    coupling = study.file.coupling
    check_against_study(legs, list(study.arms), ids, coupling.addon_from if coupling else None)
    calls, pack = record_calls(record_run)
    prices = load_prices(study.prices_path)
    gone = gate_dropped or {}
    projections = {
        leg.name: project_calls(
            leg_calls(calls, leg_arms(study, leg, gone), leg_items(legs, leg, ids)), prices, pack
        )
        for leg in legs.legs
    }
    for name, p in projections.items():
        if p.calls == 0 and leg_arms(study, legs.leg(name), gone):
            raise HarnessError(
                f"leg {name!r}: the record run {record_run} made no call for its arms and items; "
                "it cannot be projected (was the record run restricted?)"
            )
    chosen = {n: p.worst if basis == "worst" else p.expected for n, p in projections.items()}
    kept, dropped = plan_drops(legs, chosen, cap)
    return projections, kept, dropped


def default_stage(study: Study) -> str:
    """A new stage per pilot: an earlier pilot's spend never counts against this one's cap."""
    return f"pilot-{study.name}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"


def find_record_run(study: Study, run_root: Path, given: Path | None) -> Path:
    if given is not None:
        if not (given / "calls.jsonl").is_file():
            raise HarnessError(f"--from {given}: not a run directory with calls.jsonl")
        return given
    found = passing_record_run(study, run_root)
    if found is None:
        raise HarnessError(
            f"no passing record run of this study under {run_root} to project the legs from",
            hint=f"run `harness record {study.path} --run-dir {run_root}`, or pass --from RUN",
        )
    return found


def _restricted(study: Study, items: list[str], stage: str, cap: Decimal) -> Study:
    """The study as one leg runs it: its items only, its runs reserved in the pilot's stage.
    The file's hashes stay the study's: a leg is a live run of this very study."""
    wanted = set(items)
    file = study.file.model_copy(update={"stage": stage, "stage_cap": str(cap)})
    return study.model_copy(
        update={"items": [i for i in study.items if i.id in wanted], "file": file}
    )


def _left_in_stage(study: Study, stage: str) -> Decimal:
    with Ledger(study.ledger_location) as ledger:
        state = ledger.state()
    st = state.stages[stage]
    return st.cap_usd - state.stage_spend(stage) - state.stage_reserved(stage)


def run_pilot(
    study: Study,
    legs: LegsFile,
    *,
    cap: Decimal,
    run_root: Path,
    out: Path,
    record_run: Path | None = None,
    basis: Basis = "worst",
    stage: str | None = None,
    isolation: Isolation = "auto",
    new_ledger_branch: bool = False,
    skip_suite: bool = False,
) -> PilotResult:
    check_suite(skip_suite)  # V0, before anything else: each leg checks it again
    source = find_record_run(study, run_root, record_run)
    gate = passing_gate(study.study_sha256, study.compose_sha256, run_root)
    if gate is None:
        raise HarnessError(
            f"no passing determinism gate of this study under {run_root}",
            hint=f"run `harness gate {study.path} --run-dir {run_root}` first",
        )
    gate_dropped = dropped_followers(study, gate)  # the arms no leg may spend on
    projections, kept, dropped = plan(study, legs, source, cap, basis, gate_dropped)
    # Keys and the ledger's branch: a pilot refused after its stage opened leaves it open.
    check_live_needs(study, source, new_branch=new_ledger_branch)
    stage = stage or default_stage(study)
    result = PilotResult(out, stage, kept, dropped, projections, gate_dropped=gate_dropped)
    out.mkdir(parents=True, exist_ok=True)
    _write_plan(result, legs, source, cap, basis)
    for name in dropped:
        log.warning("leg dropped before any spend: the projection passed the cap", leg=name)
    # The keys are held from before the stage opens to after the last leg settled: another live
    # job cannot take the slot between two legs and leave the pilot stopped half spent.
    with live_job(study.ledger_location, stage, out.resolve()) as job:
        try:
            with Ledger(study.ledger_location) as ledger:
                ledger.open_stage(stage, cap)
        except LedgerError as e:
            raise HarnessError(f"cannot open the pilot's stage {stage!r}: {e}") from None
        flags = {"new_ledger_branch": new_ledger_branch, "skip_suite": skip_suite}
        _run_legs(study, legs, result, run_root, isolation, cap, job, flags)
    units = unit_costs([Path(leg.run_dir) for leg in result.legs if leg.run_dir])
    doc = {
        "schema": PILOT_SCHEMA,
        "stage": stage,
        "legs": {leg.name: leg.run_dir for leg in result.legs if leg.run_dir},
        "arms": {arm: u.as_json() for arm, u in units.items()},
    }
    write_atomic(out / "unit_costs.json", (json.dumps(doc, indent=2) + "\n").encode())
    _write_pilot(result)
    return result


def _run_legs(
    study: Study,
    legs: LegsFile,
    result: PilotResult,
    run_root: Path,
    isolation: Isolation,
    cap: Decimal,
    job: LiveJob,
    flags: dict[str, bool],
) -> None:
    """Each kept leg as a live run of the study, one after another, under the pilot's claim."""
    from harness.run.pipeline import run_study  # the live path itself, not a second one

    stage, gate_dropped = result.stage, result.gate_dropped
    ids = [item.id for item in study.items]
    by_name = {leg.name: leg for leg in legs.legs}
    for name in result.kept:
        leg = by_name[name]
        arms = leg_arms(study, leg, gate_dropped)
        if not arms:
            why = "not run: the cross-arm gate dropped every arm of it"
            result.legs.append(LegResult(name, why=why, skipped=True))
            continue
        left = _left_in_stage(study, stage)
        if left <= 0:
            result.legs.append(LegResult(name, why=f"not run: stage {stage!r} has nothing left"))
            continue
        request = RunRequest(
            study=_restricted(study, leg_items(legs, leg, ids), stage, cap),
            mode="live",
            run_root=run_root,
            arms=arms,
            isolation=isolation,
            cap=str(left),
            live_job=job,
            new_ledger_branch=flags["new_ledger_branch"],
            skip_suite=flags["skip_suite"],
        )
        log.info("pilot leg starts", leg=name, run_cap=str(left), stage=stage)
        ran = run_study(request)
        run = ran.header.study
        passed = bool(run is not None and run.passed)
        result.legs.append(
            LegResult(name, str(ran.run_dir), passed, "" if passed else "the live run failed")
        )
        _write_pilot(result)


def _write_plan(
    result: PilotResult, legs: LegsFile, source: Path, cap: Decimal, basis: str
) -> None:
    doc = {
        "schema": PILOT_SCHEMA,
        "record_run": str(source),
        "cap_usd": str(cap),
        "basis": basis,
        "stage": result.stage,
        "drop_order": legs.order_of_drops(),
        "legs": [
            {
                "name": leg.name,
                "calls": result.projections[leg.name].calls,
                "expected_usd": _money(result.projections[leg.name].expected),
                "worst_usd": _money(result.projections[leg.name].worst),
                "kept": leg.name in result.kept,
            }
            for leg in legs.legs
        ],
        "kept": result.kept,
        "dropped": result.dropped,
        "arms_dropped_by_the_gate": result.gate_dropped,
    }
    write_atomic(result.out / "plan.json", (json.dumps(doc, indent=2) + "\n").encode())


def _write_pilot(result: PilotResult) -> None:
    doc = {
        "schema": PILOT_SCHEMA,
        "stage": result.stage,
        "legs": [leg.__dict__ for leg in result.legs],
        "passed": result.passed,
    }
    write_atomic(result.out / "pilot.json", (json.dumps(doc, indent=2) + "\n").encode())
