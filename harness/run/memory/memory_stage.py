"""A memory benchmark's history, ingested before its question (seam v2).

For an item with a `memory` (harness/datasets), before its question is asked on an arm:

- an arm whose health names a `state_dir` (every bit of its memory lives in $ARM_STATE_DIR) is
  started fresh on an empty folder, takes in the history session by session, and is stopped;
  its folder is copied to `RUN_DIR/snapshots/<arm>/<history>/` and hashed (a `snapshot` line in
  turns.jsonl). The history is ingested once per arm: each question of it (LoCoMo asks many of
  one conversation) starts the arm afresh on its own copy, checked against the hash, and opens
  the session the history was ingested under, so no question sees what another one changed.
- an arm without one (bare, a v2 arm that keeps its memory in its process) takes the history
  into the question's own session each time, on the running arm.

Each history session is one `POST /sessions/{id}/ingest`, with the arm's clock pinned to that
session's date, under the study's `ingest_deadline_ms`, and the proxy told the item, the
session's index and `phase = "ingest"`, so its calls are charged to the item as ingestion, not
as an answer. Each is an `ingestion` line in turns.jsonl (rundir/turns/ingestions.py). A v1 arm
cannot ingest: its questions fail as the arm's error, named once.

After each ingestion the backend is asked whether the arm met one of its bounds (pids, memory,
disk: harness/run/turns/limit_check.py), as after each turn: if so the ingestion is recorded
`resource_limit` naming the bound (an OOM-killed arm is the arm's failure, not a retry), the rest
of the history is not ingested, no snapshot is taken, and the question is not asked: its turns
are recorded `resource_limit` and the arm is replaced (the orchestrator's `limited`).

A resumed run (`--resume`) starts from the snapshots the runs it resumes took: a history already
ingested and snapshotted there is not ingested again (its copy is checked against its hash).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
import structlog

from arms.client import SeamClient, SeamError
from arms.seam import INGEST_VERSION, Health, Ingest, IngestMessage, OpenSession
from harness.datasets import History
from harness.isolation import InfraError, IsolationBackend, seam_client
from harness.run.control import ProxyControl
from harness.run.memory import snapshot
from harness.run.memory.arm_stop import stop_arm
from harness.run.turns import describe
from harness.study import Item, Parity, parity_for
from rundir.errors import RunDirError
from rundir.instances import join
from rundir.runs import read_header
from rundir.turns import IngestionRecord, IngestOutcome, SnapshotRecord, TurnLog, read_ingestions

log = structlog.get_logger("harness.run.memory")

STATE_ENV = "ARM_STATE_DIR"
DOCKER_STATE = "/harness/logs/state"  # RUN_DIR/logs/<arm>/state, as the container sees it


def host_state(run_dir: Path, arm: str) -> Path:
    return run_dir / "logs" / arm / "state"


def state_env(backend: IsolationBackend, run_dir: Path, arm: str) -> dict[str, str]:
    """$ARM_STATE_DIR for `arm`: its log folder's `state/`, which both backends share with the
    host (docker mounts RUN_DIR/logs/<arm> at /harness/logs)."""
    if backend.isolation == "docker":
        return {STATE_ENV: DOCKER_STATE}
    return {STATE_ENV: str(host_state(run_dir, arm).resolve())}


@dataclass(frozen=True)
class Prepared:
    session_id: str
    opened: bool  # the session is open already (the history went into it)
    failed: str | None = None  # the arm cannot take the history: its questions fail with this
    stopped: bool = False  # Ctrl-C during the ingestion: the question is not asked (nor recorded)
    limited: str | None = None  # the arm met a bound while ingesting: the question is not asked


@dataclass(frozen=True)
class Snapshot:
    path: Path
    sha256: str


class MemoryStage:
    def __init__(
        self,
        run_id: str,
        run_dir: Path,
        backend: IsolationBackend,
        turns: TurnLog,
        clients: dict[str, SeamClient],
        seam_urls: dict[str, str],
        ingest_deadline_ms: int,
        worker: int = 0,
    ) -> None:
        self.run_id = run_id
        self.worker = worker  # --workers: this worker's copy of each arm keeps its own state
        self.run_dir = run_dir
        self.backend = backend
        self.turns = turns
        self.clients = clients  # the orchestrator's: a restart here replaces its client
        self.seam_urls = seam_urls
        self.deadline_ms = ingest_deadline_ms
        self.parity: Parity | None = None  # the study's engine parity (harness/study/parity.py)
        self.health: dict[str, Health] = {}
        self.snapshots: dict[tuple[str, str], Snapshot] = {}
        self.adopted = False  # the resumed runs' snapshots were looked for
        # The orchestrator's Ctrl-C: the session in flight settles, the rest of the history
        # is not ingested, a partial history is never snapshotted.
        self.stopping: Callable[[], bool] = lambda: False
        self.control: ProxyControl | None = None
        # (arm, item) -> this attempt's ingestion lines, for the question's record
        self.ingested: dict[tuple[str, str], list[IngestionRecord]] = {}

    async def learn(self, arm: str) -> None:
        """What the arm said of itself: its seam version and state folder."""
        self.health[arm] = await self.clients[arm].health()

    def keeps_state(self, arm: str) -> bool:
        health = self.health.get(arm)
        return bool(health and health.state_dir)

    async def prepare(self, item: Item, arm: str, attempt: int) -> Prepared:
        """Ingest `item`'s history on `arm` (or restore its snapshot); where to ask the question.
        Raises InfraError when the machinery failed (the orchestrator retries the item)."""
        assert item.memory is not None
        history = item.memory.history
        self.ingested[(arm, item.id)] = []  # a retried attempt starts its account afresh
        if not self.adopted:
            self.adopted = True
            self.snapshots = earlier_snapshots(self.run_dir) | self.snapshots
        health = self.health.get(arm)
        if health is None or health.seam < INGEST_VERSION:
            seam = health.seam if health else "?"
            return Prepared("", False, f"arm {arm!r} speaks seam {seam}: it cannot ingest history")
        if not self.keeps_state(arm):
            session_id = f"{item.id}.{attempt}"
            limited = await self._ingest_all(item, arm, attempt, session_id, history)
            return Prepared(session_id, opened=True, stopped=self.stopping(), limited=limited)
        key = (arm, history.id)
        state = host_state(self.run_dir, join(arm, self.worker))
        if key not in self.snapshots:
            await self._stop(arm)
            await asyncio.to_thread(snapshot.empty, state)
            await self._restart(arm)
            limited = await self._ingest_all(item, arm, attempt, history.id, history)
            if limited is not None:  # a partial history is never snapshotted
                return Prepared("", False, limited=limited)
            if self.stopping():
                return Prepared("", False, stopped=True)
            started = time.monotonic()
            await self._stop(arm)
            target = self.run_dir / "snapshots" / arm / history.id
            taken = await asyncio.to_thread(snapshot.take, state, target)
            self.snapshots[key] = Snapshot(target, taken.sha256)
            self.turns.append(
                SnapshotRecord(
                    run=self.run_id,
                    item=item.id,
                    arm=arm,
                    history=history.id,
                    sha256=taken.sha256,
                    files=taken.files,
                    bytes=taken.bytes,
                    seconds=round(time.monotonic() - started, 3),
                    path=target.relative_to(self.run_dir).as_posix(),
                )
            )
        else:
            await self._stop(arm)
        kept = self.snapshots[key]
        await asyncio.to_thread(snapshot.restore, kept.path, state, kept.sha256)
        await self._restart(arm)
        return Prepared(history.id, opened=False)

    def account(self, item: Item, arm: str) -> tuple[list[IngestionRecord], str | None]:
        """What ingesting `item`'s history on `arm` took, and the snapshot its question read."""
        assert item.memory is not None
        kept = self.snapshots.get((arm, item.memory.history.id))
        return self.ingested.pop((arm, item.id), []), kept.sha256 if kept else None

    async def _stop(self, arm: str) -> None:
        # The client's keep-alive connection is closed first, while the arm still knows it: a
        # FIN that reached the next container on the same address would be answered with a
        # reset, which the docker backend's rules log as the arm reaching out (a stray).
        await self.clients[arm].aclose()
        await stop_arm(self.backend, arm)

    async def _restart(self, arm: str) -> None:
        handle = await self.backend.restart_arm(arm)
        await self.clients[arm].aclose()
        self.clients[arm] = seam_client(handle.seam_url)
        self.seam_urls[arm] = handle.seam_url

    async def _ingest_all(
        self, item: Item, arm: str, attempt: int, session_id: str, history: History
    ) -> str | None:
        """Ingest every session of `history`; the bound the arm met, if it met one."""
        # A lazily held history reads its messages now, and they are dropped with this frame:
        # the run holds one history's messages per worker, not every drawn item's.
        history = await asyncio.to_thread(history.full)
        client = self.clients[arm]
        opened = OpenSession(
            session_id=session_id,
            item_id=item.id,
            clock=history.sessions[0].date,
            parity=parity_for(self.parity, arm),
        )
        try:
            await client.open_session(opened)
        except (SeamError, httpx.HTTPError) as e:
            raise InfraError(f"opening the history's session failed: {e}") from e
        try:
            for index in range(len(history.sessions)):
                if self.stopping():
                    break
                record = await self._ingest_one(item, arm, attempt, session_id, history, index)
                self.turns.append(record)
                self.ingested.setdefault((arm, item.id), []).append(record)
                if record.outcome == "resource_limit":
                    return record.error
                if record.outcome == "error" and "does not ingest" in (record.error or ""):
                    break  # 501: the rest would say the same
        finally:
            await self._tell(arm, None, 0)
        return None

    async def _ingest_one(
        self, item: Item, arm: str, attempt: int, session_id: str, history: History, index: int
    ) -> IngestionRecord:
        session = history.sessions[index]
        self.backend.pin_clock(arm, session.date)  # exact and at once: no wait
        await self._tell(arm, item.id, index, "ingest")
        body = Ingest(
            session_id=session.session_id,
            date=session.date,
            messages=[
                IngestMessage(role=m.role, content=m.content, speaker=m.speaker)
                for m in session.messages
            ],
            deadline_ms=self.deadline_ms,
        )
        try:
            result = await self.clients[arm].ingest(session_id, body, self.deadline_ms / 1000)
        except httpx.HTTPError as e:
            # An arm killed by its own bound (OOM) drops the connection: the arm's failure.
            if why := await self._met_bound(arm):
                return self._record(item, arm, attempt, history, index, "resource_limit", why)
            raise InfraError(f"ingesting {session.session_id} on {arm}: {e}") from e
        if why := await self._met_bound(arm):
            return self._record(
                item, arm, attempt, history, index, "resource_limit", why, result.seconds
            )
        if result.outcome == "broken" or not self.backend.arm_alive(arm):
            raise InfraError(f"ingesting {session.session_id}: the arm died ({result.error})")
        outcome: IngestOutcome = result.outcome  # broken was raised just above
        return self._record(
            item, arm, attempt, history, index, outcome, result.error, result.seconds, result.stored
        )

    async def _met_bound(self, arm: str) -> str | None:
        met = await asyncio.to_thread(self.backend.limit_hits, arm)
        if not met:
            return None
        why = describe(arm, met, self.backend.limits)
        log.warning("resource limit while ingesting", limit=met, error=why)
        return why

    def _record(
        self,
        item: Item,
        arm: str,
        attempt: int,
        history: History,
        index: int,
        outcome: IngestOutcome,
        error: str | None,
        seconds: float | None = None,
        stored: int | None = None,
    ) -> IngestionRecord:
        session = history.sessions[index]
        return IngestionRecord(
            run=self.run_id,
            item=item.id,
            arm=arm,
            history=history.id,
            session=session.session_id,
            index=index,
            date=session.date,
            messages=len(session.messages),
            outcome=outcome,
            stored=stored,
            seconds=round(seconds, 3) if seconds is not None else None,
            attempts=attempt,
            error=error,
        )

    async def _tell(
        self, arm: str, item: str | None, turn: int, phase: Literal["answer", "ingest"] = "answer"
    ) -> None:
        assert self.control is not None
        await self.control.tell(arm, item, turn, phase)


def earlier_snapshots(run_dir: Path) -> dict[tuple[str, str], Snapshot]:
    """The snapshots of the runs `run_dir` resumes (its header's `resumed_from`, and theirs),
    newest run first, by (arm, history), whose folders are still there."""
    found: dict[tuple[str, str], Snapshot] = {}
    seen: set[Path] = set()
    run = _resumed_from(run_dir)
    while run is not None and run.resolve() not in seen:
        seen.add(run.resolve())
        for record in read_ingestions(run / "turns.jsonl"):
            folder = run / record.path if isinstance(record, SnapshotRecord) else None
            if isinstance(record, SnapshotRecord) and folder is not None and folder.is_dir():
                found.setdefault((record.arm, record.history), Snapshot(folder, record.sha256))
        run = _resumed_from(run)
    return found


def _resumed_from(run: Path) -> Path | None:
    try:
        header = read_header(run)
    except (RunDirError, OSError):
        return None
    previous = header.study.resumed_from if header.study else None
    return Path(previous) if previous else None
