"""One study run end to end: check, start the proxy and arms, drive the items, write run.json."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import structlog
from pydantic import ValidationError

from harness.checks.masks import proxy_masks
from harness.checks.memory_controls import misses_per_arm
from harness.errors import HarnessError
from harness.isolation.base import InfraError, IsolationBackend, ProxySettings
from harness.run.orchestrator import Orchestrator, RunTally, StrayConnection
from harness.run.resume import resumption
from harness.run.strays import at_teardown, by_destination
from harness.study import Item, Study, sha256
from rundir.gate_record import passing_gate
from rundir.header import RunHeader, StudyRun, new_run_id, now_iso, versions, write_header
from rundir.manifest import write_manifest
from rundir.turns import TurnLog, TurnRecord

log = structlog.get_logger("harness.study")

Isolation = Literal["auto", "docker", "local"]
PACKAGED_PRICES = Path(__file__).resolve().parents[2] / "ledger" / "prices.toml"


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


@dataclass
class RunResult:
    run_dir: Path
    header: RunHeader

    @property
    def passed(self) -> bool:
        return bool(self.header.study and self.header.study.passed)


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


def select_items(study: Study, limit: int | None) -> list[Item]:
    if limit is not None and limit <= 0:
        raise HarnessError("--limit must be a positive number of items")
    return study.items[:limit] if limit else list(study.items)


def make_backend(
    isolation: Isolation, run_dir: Path, study: Study | None = None
) -> IsolationBackend:
    reason = f"--isolation {isolation}"
    if isolation == "auto":
        from harness.isolation.choose import choose_isolation

        choice = choose_isolation(study)
        isolation, reason = choice.isolation, f"auto: {choice.reason}"
        log.info("isolation chosen", isolation=isolation, reason=choice.reason)
    backend: IsolationBackend
    if isolation == "docker":
        from harness.isolation import docker_net
        from harness.isolation.docker import DockerBackend

        docker_net.require_engine()
        backend = DockerBackend(
            run_dir,
            work_dir=study.path.parent if study else None,
            compose=study.compose_path if study else None,
        )
    else:
        from harness.isolation.local import LocalBackend

        backend = LocalBackend(run_dir)
    backend.isolation_reason = reason
    return backend


def passing_record_run(study: Study, run_root: Path) -> Path | None:
    """A record run of this very study (same study and compose hashes) that passed with no
    stray connection: live mode spends money only on a study that has run clean for free."""
    for header_path in sorted(run_root.glob("*/run.json"), reverse=True):
        try:
            header = RunHeader.model_validate(json.loads(header_path.read_text()))
        except (OSError, ValueError, ValidationError):
            continue
        run = header.study
        if (
            header.mode == "record"
            and run is not None
            and run.study_sha256 == study.study_sha256
            and run.compose_sha256 == study.compose_sha256
            and run.passed
        ):
            egress = header_path.parent / "egress.jsonl"
            if egress.exists() and not egress.read_text().strip():
                return header_path.parent
    return None


def run_study(request: RunRequest) -> RunResult:
    """Everything that can be checked is checked before a process starts."""
    study = request.study
    arms = select_arms(study, request.arms)
    items = select_items(study, request.limit)
    if request.mode == "live":
        if not request.cap:
            raise HarnessError("live mode needs a cap", hint="pass --cap USD, e.g. --cap 10")
        if passing_record_run(study, request.run_root) is None:
            raise HarnessError(
                f"no passing record run of this study under {request.run_root}",
                hint=f"run `harness record {study.path} --run-dir {request.run_root}` first; "
                "live mode starts only after a record run of the same study and compose file "
                "passed with no stray connection",
            )
        if passing_gate(study.study_sha256, study.compose_sha256, request.run_root) is None:
            raise HarnessError(
                f"no passing determinism gate of this study under {request.run_root}",
                hint=f"run `harness gate {study.path} --run-dir {request.run_root}` first; live "
                "mode starts only after two record runs of the same study and compose file sent "
                "the same requests",
            )
    skip: frozenset[tuple[str, str]] = frozenset()
    if request.resume_from is not None:
        skip = resumption(request.resume_from, study, request.mode, items).done
        arms = [a for a in arms if any((item.id, a) not in skip for item in items)]
        if not arms:
            raise HarnessError(
                f"--resume {request.resume_from}: nothing left to run; it finished every item "
                "on every arm asked for"
            )
        log.info("resuming", run=str(request.resume_from), finished_pairs=len(skip))
    run_id = new_run_id(study.name)
    run_dir = request.run_root / run_id
    try:
        run_dir.mkdir(parents=True)
    except OSError as e:
        raise HarnessError(f"cannot create run directory {run_dir}: {e.strerror}") from e
    backend = make_backend(request.isolation, run_dir, study)
    prices = study.prices_path or PACKAGED_PRICES
    header = RunHeader(
        run_id=run_id,
        mode=request.mode,
        kind="study",
        started=now_iso(),
        stubs_sha256=sha256(study.stubs_path) if study.stubs_path else None,
        versions=versions(),
        study=StudyRun(
            name=study.name,
            study_path=str(study.path),
            study_sha256=study.study_sha256,
            compose_sha256=study.compose_sha256,
            items_sha256=study.items_sha256,
            prices_sha256=sha256(prices) if prices.is_file() else None,
            pins=study.pins.model_dump(exclude_none=True),
            isolation=backend.isolation,
            isolation_reason=backend.isolation_reason,
            clock_pinning=backend.clock_pinning,
            seeds={"arm_order_seed": study.file.arm_order_seed},
            arms=arms,
            items=len(items),
            deadline_ms=study.deadline_ms,
            resumed_from=str(request.resume_from.resolve()) if request.resume_from else None,
            skipped_pairs=sum((item.id, arm) in skip for item in items for arm in arms),
            capabilities={arm: study.capabilities(arm) for arm in arms}
            if backend.isolation == "docker"
            else {},
            on_stray=study.file.on_stray,
        ),
    )
    write_header(run_dir, header)
    settings = ProxySettings(
        run_dir=run_dir,
        run_id=run_id,
        mode=request.mode,
        arms=arms,
        stubs=study.stubs_path,
        # The proxy reads a [pins] table from a TOML file: the study file has one.
        pins=study.path if study.file.pins else None,
        cap=request.cap,
        prices=study.prices_path,
        ledger=study.ledger_path,
        stage=study.file.stage,
        stage_cap=study.file.stage_cap or "",
        upstreams=study.upstreams(),
        ca_bundle=study.ca_bundle_path,
        deadline=study.deadline_ms / 1000,
        masks=proxy_masks(study),
        purposes=study.purpose_rules(),
        replay_from=request.replay_from,
    )
    total = sum(len(item.turns) for item in items for arm in arms if (item.id, arm) not in skip)
    halted: StrayConnection | None = None
    seen_box: list[RunTally] = []  # the orchestrator's tally, also when the run is cut short
    with _progress(total) as advance:
        turns = TurnLog(run_dir / "turns.jsonl")
        try:
            tally = asyncio.run(
                _drive(study, arms, items, backend, settings, turns, advance, skip, seen_box)
            )
            interrupted, infra, outcomes, fatal = (
                tally.interrupted,
                tally.infra_failures,
                dict(tally.outcomes),
                None,
            )
        except (KeyboardInterrupt, asyncio.CancelledError):
            interrupted, infra, outcomes, fatal = True, 0, {}, None
        except InfraError as e:
            interrupted, infra, outcomes, fatal = False, 1, {}, str(e)
        except StrayConnection as e:
            interrupted, infra, outcomes, fatal, halted = False, 0, {}, None, e
        finally:
            turns.close()
    stray = backend.egress_attempts()
    assert header.study is not None
    header.ended = now_iso()
    header.study.interrupted = interrupted
    header.study.infra_failures = infra
    header.study.outcomes = outcomes or _count(run_dir)
    header.study.stray_connections = len(stray)
    header.study.memory_miss = misses_per_arm(run_dir / "turns.jsonl")
    ran = seen_box[0] if seen_box else RunTally()
    header.study.refused = by_destination(stray)
    header.study.teardown_strays = by_destination(
        at_teardown(stray, ran.seen_strays, ran.last_turn_end)
    )
    header.study.halted = str(halted) if halted else None
    header.study.passed = (
        fatal is None
        and halted is None
        and not interrupted
        and not stray
        and not header.study.outcomes.get("infra_failed")
    )
    write_manifest(
        run_dir,
        header,
        prices=prices if prices.is_file() else None,
        ledger=study.ledger_path if request.mode == "live" else None,
        images=backend.image_digests(),
    )  # rewrites run.json with the file list
    if fatal:
        raise HarnessError(f"the run stopped: {fatal}", hint=f"see the logs in {run_dir}/logs")
    if halted:
        # A failed run (exit 1, with its summary), not a usage error: run.json says why.
        log.error("run halted at once", reason=str(halted), egress=str(run_dir / "egress.jsonl"))
    return RunResult(run_dir, header)


async def _drive(
    study: Study,
    arms: list[str],
    items: list[Item],
    backend: IsolationBackend,
    settings: ProxySettings,
    turns: TurnLog,
    advance: Callable[[TurnRecord], None],
    skip: frozenset[tuple[str, str]] = frozenset(),
    seen_box: list[RunTally] | None = None,
) -> RunTally:
    try:
        proxy = await backend.start_proxy(settings)
        orchestrator = Orchestrator(
            study, arms, items, backend, settings.run_id, turns, advance, skip=skip
        )
        if seen_box is not None:
            seen_box.append(orchestrator.tally)
        return await orchestrator.run(proxy)
    finally:
        # Shielded: a second Ctrl-C cancels the run, never the stopping of what it started.
        await asyncio.shield(backend.stop())


def _count(run_dir: Path) -> dict[str, int]:
    from rundir.turns import read_turns

    counts: dict[str, int] = {}
    for record in read_turns(run_dir / "turns.jsonl"):
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    return counts


@contextmanager
def _progress(total: int) -> Iterator[Callable[[TurnRecord], None]]:
    """A progress bar on a terminal; one structured log line per turn otherwise."""
    if not sys.stderr.isatty() or os.environ.get("HARNESS_NO_PROGRESS"):

        def log_turn(record: TurnRecord) -> None:
            log.info(
                "turn",
                item=record.item,
                arm=record.arm,
                turn=record.turn,
                outcome=record.outcome,
                first_token_s=record.first_token_s,
                last_token_s=record.last_token_s,
                attempts=record.attempts,
            )

        yield log_turn
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("turns", total=total)

        def step(record: TurnRecord) -> None:
            bar.update(task, advance=1, description=f"{record.item} {record.arm} t{record.turn}")

        yield step
