"""The pipeline's first stage: everything that can be checked is checked before a process starts.

It picks the arms and items, refuses a live run without a clean record run and a passing gate
(harness/run/live/admission.py), works out what a resumed run skips, chooses the isolation backend
(the header records which and why), creates the run directory and writes its header, run.json. What
the later stages need is in the `Plan` it returns; they read the study, the backend and the header
from there and never come back here.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import structlog

from harness.checks import proxy_masks
from harness.errors import HarnessError
from harness.isolation import Isolation, IsolationBackend, ProxySettings
from harness.protocol import CheckedProtocol, check_protocol
from harness.run.live import admit_live, dropped_followers, without_dropped
from harness.run.stages.resume import resumption
from harness.run.stages.shards import ShardSpec
from harness.run.stages.worker_names import check_workers, instances
from harness.study import Item, Study, sha256
from ledger.live_job import LiveJob
from rundir.atomic import write_atomic
from rundir.control import PurposeRule
from rundir.runs import (
    ADDENDUM_COPY,
    RunHeader,
    Shard,
    StudyRun,
    new_run_id,
    now_iso,
    shard_items,
    versions,
    write_header,
)

log = structlog.get_logger("harness.study")

PACKAGED_PRICES = Path(__file__).resolve().parents[3] / "ledger" / "prices.toml"
Pair = tuple[str, str]  # (item id, arm)


@dataclass
class RunRequest:
    study: Study
    mode: Literal["record", "live", "replay"]
    run_root: Path
    arms: list[str] = field(default_factory=list)
    limit: int | None = None
    isolation: Isolation = "auto"
    cap: str = ""
    replay_from: Path | None = None  # replay: the recorded run that answers every call
    resume_from: Path | None = None  # --resume: skip what this stopped run finished
    allow_misses: bool = False  # --allow-misses: memory-control misses do not fail the run
    shard: ShardSpec | None = None  # --shard I/N: run only this shard's items
    workers: int | None = None  # --workers N (None: the study's `workers`)
    # Live: the ledger's live-job slot already held by the caller (a pilot, for all its legs).
    live_job: LiveJob | None = None
    new_ledger_branch: bool = False  # --new-ledger-branch: the ledger's git branch may start
    skip_suite: bool = False  # --skip-suite: live without V0's record (run.json says so)


@dataclass
class Plan:
    """A prepared run: its directory exists and holds run.json; no process has started."""

    request: RunRequest
    study: Study
    arms: list[str]
    items: list[Item]
    skip: frozenset[Pair]  # (item, arm) pairs a resumed run already finished
    run_dir: Path
    backend: IsolationBackend
    header: RunHeader
    settings: ProxySettings
    prices: Path | None  # the price table the run is priced with, if it exists
    turns_to_run: int  # for the progress bar
    workers: int = 1  # independent sets of arms running items in parallel (workers.py)


@dataclass
class Chosen:
    """What the checks chose to run: the arms and items, the pairs a resume skips, this shard,
    and in live mode the arms a failed pair gate dropped and V0's suite line."""

    arms: list[str]
    items: list[Item]
    skip: frozenset[Pair]
    shard: Shard | None
    dropped: dict[str, str]
    suite: str | None


@dataclass
class Taken:
    """What the run takes from the study, read once and before anything is written: a file that
    does not read fails the run before its directory exists."""

    prices: Path
    prices_sha256: str | None
    stubs_sha256: str | None
    capabilities: dict[str, list[str]]
    upstreams: list[str]
    purposes: list[PurposeRule]
    masks: list[str]
    workers: int


def prepare(request: RunRequest) -> Plan:
    """One pass, in the order the files are needed: the checks, what the run takes from the
    study (read once, here), the run id, the backend, then run.json and the proxy's settings."""
    study = request.study
    # First: a run under a changed frozen protocol file must not start, whatever else is wrong.
    protocol = check_protocol(study)
    chosen = _choose(request)
    taken = _take(request, chosen.arms)
    run_id, started, tool_versions = new_run_id(study.name), now_iso(), versions()
    run_dir = request.run_root / run_id
    try:
        run_dir.mkdir(parents=True)
    except OSError as e:
        raise HarnessError(f"cannot create run directory {run_dir}: {e.strerror}") from e
    # Imported here: choosing loads the docker backend, which a local run never needs.
    from harness.isolation import make_backend

    backend = make_backend(request.isolation, run_dir, study)
    if request.mode == "live" and backend.isolation == "docker" and study.ledger_url:
        _docker_ledger_reachable(backend, study.ledger_url, run_dir)  # before any spend
    if protocol is not None and protocol.addendum_bytes is not None:
        # The addendum as the run started under it, for an auditor who holds only the run.
        write_atomic(run_dir / ADDENDUM_COPY, protocol.addendum_bytes)
    header = RunHeader(
        run_id=run_id,
        mode=request.mode,
        kind="study",
        started=started,
        stubs_sha256=taken.stubs_sha256,
        versions=tool_versions,
        study=_study_run(request, backend, chosen, taken, protocol),
    )
    write_header(run_dir, header)
    arms, items, skip = chosen.arms, chosen.items, chosen.skip
    return Plan(
        request=request,
        study=study,
        arms=arms,
        items=items,
        skip=skip,
        run_dir=run_dir,
        backend=backend,
        header=header,
        settings=_proxy_settings(request, run_dir, run_id, arms, taken),
        prices=taken.prices if taken.prices.is_file() else None,
        turns_to_run=sum(
            len(item.turns) for item in items for arm in arms if (item.id, arm) not in skip
        ),
        workers=taken.workers,
    )


def _choose(request: RunRequest) -> Chosen:
    """The arms and items this run runs, after the live checks and the resume."""
    study = request.study
    arms = select_arms(study, request.arms)
    items = select_items(study, request.limit)
    shard = _shard(request.shard, items)
    if shard is not None:
        items = [item for item in items if item.id in set(shard.items)]
    dropped: dict[str, str] = {}
    suite = None
    if request.mode == "live":
        gate, suite = admit_live(
            study,
            request.run_root,
            request.cap,
            skip_suite=request.skip_suite,
            new_branch=request.new_ledger_branch,
        )
        dropped = dropped_followers(study, gate)  # before any spend (harness/run/live/dropped.py)
        arms = without_dropped(arms, request.arms, dropped)
    arms, skip = _resumed(request, arms, items)
    return Chosen(arms, items, skip, shard, dropped, suite)


def _take(request: RunRequest, arms: list[str]) -> Taken:
    study = request.study
    prices = study.prices_path or PACKAGED_PRICES
    stubs_sha256 = sha256(study.stubs_path) if study.stubs_path else None
    prices_sha256 = sha256(prices) if prices.is_file() else None
    capabilities = {arm: study.capabilities(arm) for arm in arms}
    upstreams, purposes = study.upstreams(), study.purpose_rules()
    masks = proxy_masks(study)
    workers = request.workers if request.workers is not None else study.file.workers
    check_workers(workers)  # before the run directory exists
    return Taken(
        prices, prices_sha256, stubs_sha256, capabilities, upstreams, purposes, masks, workers
    )


def _study_run(
    request: RunRequest,
    backend: IsolationBackend,
    chosen: Chosen,
    taken: Taken,
    protocol: CheckedProtocol | None,
) -> StudyRun:
    """run.json's record of the study as this run runs it."""
    study, arms, items, skip = request.study, chosen.arms, chosen.items, chosen.skip
    return StudyRun(
        name=study.name,
        study_path=str(study.path),
        study_sha256=study.study_sha256,
        compose_sha256=study.compose_sha256,
        items_sha256=study.items_sha256,
        prices_sha256=taken.prices_sha256,
        pins=study.pins.model_dump(exclude_none=True),
        parity=study.file.parity.model_dump(exclude_none=True) if study.file.parity else {},
        isolation=backend.isolation,
        isolation_reason=backend.isolation_reason,
        clock_pinning=backend.clock_pinning,
        clock_pin=backend.clock_pin or None,
        seeds={"arm_order_seed": study.file.arm_order_seed},
        arms=arms,
        items=len(items),
        deadline_ms=study.deadline_ms,
        resumed_from=str(request.resume_from.resolve()) if request.resume_from else None,
        skipped_pairs=sum((item.id, arm) in skip for item in items for arm in arms),
        capabilities=taken.capabilities if backend.isolation == "docker" else {},
        on_stray=study.file.on_stray,
        limits=study.file.limits,
        shard=chosen.shard,
        allow_misses=request.allow_misses,
        subject=study.file.subject,
        protocol=protocol.record if protocol is not None else None,
        dropped_arms=chosen.dropped,
        suite=chosen.suite,
    )


def _proxy_settings(
    request: RunRequest, run_dir: Path, run_id: str, arms: list[str], taken: Taken
) -> ProxySettings:
    """The settings the proxy starts with (the start stage hands them to the backend)."""
    study = request.study
    return ProxySettings(
        run_dir=run_dir,
        run_id=run_id,
        mode=request.mode,
        arms=instances(arms, taken.workers),  # each worker's copy of each arm: its own listeners
        stubs=study.stubs_path,
        # The proxy reads a [pins] table from a TOML file: the study file has one.
        pins=study.path if study.file.pins else None,
        cap=request.cap,
        prices=study.prices_path,
        # Resolved (every symlink followed): the docker backend mounts its folder at the same
        # path, and the locks beside it are the ones every other name of this ledger takes.
        ledger=study.ledger_path.resolve() if study.ledger_url is None else None,
        ledger_url=study.ledger_url or "",
        stage=study.file.stage,
        stage_cap=study.file.stage_cap or "",
        upstreams=taken.upstreams,
        ca_bundle=study.ca_bundle_path,
        deadline=study.deadline_ms / 1000,
        masks=taken.masks,
        purposes=taken.purposes,
        reuse=[
            f"{leader}={follower}"
            for leader, follower in (study.file.coupling.reuse if study.file.coupling else [])
        ],
        replay_from=request.replay_from,
    )


def _resumed(
    request: RunRequest, arms: list[str], items: list[Item]
) -> tuple[list[str], frozenset[Pair]]:
    """The arms left to run and the (item, arm) pairs to skip: all of them, none, unless
    --resume names a stopped run of this study."""
    if request.resume_from is None:
        return arms, frozenset()
    skip = resumption(request.resume_from, request.study, request.mode, items).done
    if request.study.file.coupling is not None:
        # A coupled item runs in every arm or in none: its order and the turn contexts handed
        # between arms come from one run (harness/run/coupled_item.py).
        skip = frozenset(p for p in skip if all((p[0], arm) in skip for arm in arms))
    arms = [a for a in arms if any((item.id, a) not in skip for item in items)]
    if not arms:
        raise HarnessError(
            f"--resume {request.resume_from}: nothing left to run; it finished every item "
            "on every arm asked for"
        )
    log.info("resuming", run=str(request.resume_from), finished_pairs=len(skip))
    return arms, skip


def select_arms(study: Study, wanted: list[str]) -> list[str]:
    if not wanted:
        return list(study.arms)
    unknown = [name for name in wanted if name not in study.arms]
    if unknown:
        raise HarnessError(
            f"--arm {', '.join(unknown)}: not an arm of study {study.name!r}",
            hint=f"choose among {', '.join(study.arms)}",
        )
    return list(dict.fromkeys(wanted))


def _shard(spec: ShardSpec | None, items: list[Item]) -> Shard | None:
    """This shard's part of the items (round robin, rundir/runs/shards.py), as run.json records
    it."""
    if spec is None:
        return None
    ids = shard_items([item.id for item in items], spec.index, spec.count)
    if not ids:
        raise HarnessError(
            f"shard {spec.label} has no items: the study runs {len(items)}",
            hint=f"use at most {len(items)} shards",
        )
    return Shard(
        index=spec.index, count=spec.count, source=spec.source, items=ids, of_items=len(items)
    )


def select_items(study: Study, limit: int | None) -> list[Item]:
    if limit is not None and limit <= 0:
        raise HarnessError("--limit must be a positive number of items")
    return study.items[:limit] if limit else list(study.items)


def _docker_ledger_reachable(backend: IsolationBackend, ledger_url: str, run_dir: Path) -> None:
    """The docker backend's proxy, in its container, books at the PostgreSQL ledger itself, by
    the same URL: one it could not reach (the host's 127.0.0.1, a Unix socket, an image without
    psycopg) is refused now in one line, its fresh run directory removed, rather than failing
    as the proxy starts."""
    from harness.isolation.docker import DockerBackend

    assert isinstance(backend, DockerBackend)
    problem = backend.postgres_ledger_problem(ledger_url)
    if problem is not None:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise HarnessError(
            f"the docker backend's proxy cannot reach the PostgreSQL ledger: {problem}",
            hint="or run with --isolation local",
        )
