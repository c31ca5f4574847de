"""The orchestrator: drive every item's scripted turns through every arm, alike.

Per item the arms run one after another in a seeded order (no arm always goes first, and the
order is reproducible), each from a fresh session, each turn under the same wall deadline at the
seam, with the arm's clock pinned to the item's date. Before each turn the proxy is told which
arm, item and turn is running, so every call is attributed. A failure of the machinery (the arm's
process died, its seam refused the connection) is retried from the item's first turn on a fresh
arm, up to MAX_RETRIES times, and counted apart from the arm's own failures (cut, error).

A refused connection (any arm's, from any source: guard, proxy, kernel log) is looked for while
a turn runs, every WATCH_S. With the study's `on_stray = "halt"` (the default) the first one
stops the run at once: the turn in flight is cut and recorded as `stray_connection`, no later
turn runs, and StrayConnection names the arm and the destination. With `"fail"` the run goes on
and fails at its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import httpx
import structlog

from arms.client import SeamClient, SeamError, TurnResult
from arms.seam import OpenSession, Turn
from harness.checks import memory_controls
from harness.isolation.base import InfraError, IsolationBackend, ProxyInfo
from harness.run.rtt import live_upstreams, probe_all
from harness.run.strays import Key, stray_key
from harness.study import Item, Study
from rundir.rtt import ProbePhase, RttLog
from rundir.strays_seen import StraySeen, append_seen
from rundir.turn_message import TurnMessage
from rundir.turns import TurnLog, TurnOutcome, TurnRecord

log = structlog.get_logger("harness.run.orchestrator")

MAX_RETRIES = 3
BACKOFF_S = 0.5  # doubled after each retry: 0.5, 1, 2 s
# A stream that breaks as the arm's process dies can be seen before the process is reaped.
DEATH_GRACE_S = 1.0
WATCH_S = 1.0  # how often a running turn checks that its arm is still alive (and for strays)
# A turn in flight when a stray is seen gets this long to end by itself, so an answer that was
# all but sent is kept; then it is cut.
HALT_GRACE_S = 0.5


def arm_order(seed: int, item_id: str, arms: Sequence[str]) -> list[str]:
    """The order the arms run an item in: differs across items, identical for the same seed.

    random.Random seeded with a str hashes it with SHA-512, so the order does not depend on
    PYTHONHASHSEED or the platform.
    """
    order = list(arms)
    random.Random(f"{seed}:{item_id}").shuffle(order)
    return order


class StrayConnection(Exception):
    """A refused connection halted the run (`on_stray = "halt"`)."""

    def __init__(self, entry: dict[str, object], result: TurnResult | None = None) -> None:
        self.entry = entry
        self.result = result  # the turn in flight, if it ended within HALT_GRACE_S
        self.arm = str(entry.get("arm"))
        self.destination = str(entry.get("destination"))
        source = str(entry.get("source"))
        protocol = entry.get("protocol")
        how = f"{protocol}, {source}" if protocol else source
        flags = entry.get("flags")
        how += f", flagged {'/'.join(map(str, flags))}" if isinstance(flags, list) else ""
        super().__init__(f"arm {self.arm!r} tried to reach {self.destination} ({how})")


def _strongest(entries: list[dict[str, object]]) -> dict[str, object]:
    """The entry a halt names: the harness's own evidence (kernel log, proxy) before a guard
    line, and a guard line the arm could not have forged (no flags) before one it did."""
    return min(entries, key=lambda e: (e.get("source") == "guard", bool(e.get("flags"))))


@dataclass
class RunTally:
    outcomes: Counter[str] = field(default_factory=Counter)
    infra_failures: int = 0
    interrupted: bool = False
    seen_strays: set[Key] = field(default_factory=set)  # egress entries seen while running
    last_turn_end: dict[str, float] = field(default_factory=dict)  # arm -> epoch seconds


class Orchestrator:
    def __init__(
        self,
        study: Study,
        arms: list[str],
        items: list[Item],
        backend: IsolationBackend,
        run_id: str,
        turns: TurnLog,
        on_turn: Callable[[TurnRecord], None] | None = None,
        skip: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        self.study = study
        self.arms = arms
        self.items = items
        self.backend = backend
        self.run_id = run_id
        self.turns = turns
        self.on_turn = on_turn or (lambda record: None)
        self.skip = skip  # (item, arm) pairs a resumed run already finished
        self.tally = RunTally()
        self.clients: dict[str, SeamClient] = {}
        self.control: httpx.AsyncClient | None = None
        self.stopping = False
        self.deadline_s = study.deadline_ms / 1000
        # Shared with the tally: the run's final egress read names what no turn saw (teardown).
        self.seen_strays = self.tally.seen_strays
        self.halt_on_stray = study.file.on_stray == "halt"
        self.turn_strays: Counter[str] = Counter()  # refused attempts per arm, this turn
        self.running: tuple[str, str, int] | None = None  # the turn in flight: arm, item, turn
        self.seam_urls: dict[str, str] = {}  # arm -> its seam, for the round-trip probes
        run_dir = turns.path.parent
        self.rtt = RttLog(run_dir / "rtt.jsonl")
        self.upstreams = live_upstreams(run_dir, dict(study.file.vendors))

    # --- the run ---------------------------------------------------------------------------

    async def run(self, proxy: ProxyInfo) -> RunTally:
        """Start the arms, run every item, and always stop the clients (the caller stops the
        backend). Ctrl-C: the turn in flight settles, then the run stops; twice: at once."""
        self._install_signals()
        self.control = httpx.AsyncClient(base_url=proxy.control_url, trust_env=False, timeout=10)
        try:
            # One at a time: on a small machine, arms starting together would time each other.
            for name in self.arms:
                # The study's capabilities join the arm's own: the backend sees one list.
                spec = self.study.arms[name].model_copy(
                    update={"cap_add": self.study.capabilities(name)}
                )
                handle = await self.backend.start_arm(name, spec, proxy)
                self.clients[name] = SeamClient(handle.seam_url)
                self.seam_urls[name] = handle.seam_url
                log.info("arm ready", arm=name, seam=handle.seam_url)
                await self._halt_if_stray()  # an arm that reached out while starting
            await self._probe("start")  # before any arm's first turn
            for item in self.items:
                for arm in arm_order(self.study.file.arm_order_seed, item.id, self.arms):
                    if (item.id, arm) in self.skip:
                        continue
                    if self.stopping:
                        self.tally.interrupted = True
                        return self.tally
                    await self._item_on_arm(item, arm)
            await self._probe("end")  # after every arm's last turn, before they stop
        finally:
            self._remove_signals()
            for client in self.clients.values():
                await client.aclose()
            await self.control.aclose()
        return self.tally

    async def _item_on_arm(self, item: Item, arm: str) -> None:
        structlog.contextvars.bind_contextvars(item=item.id, arm=arm)
        attempt = 1
        while True:
            done: list[TurnRecord] = []
            try:
                await self._attempt(item, arm, attempt, done)
                break
            except StrayConnection:
                for record in done:  # what ran, the halted turn included, is kept
                    self._write(record)
                raise
            except InfraError as e:
                self.tally.infra_failures += 1
                log.warning("infrastructure failure", attempt=attempt, error=str(e))
                if attempt > MAX_RETRIES or self.stopping:
                    self._give_up(item, arm, attempt, done, str(e))
                    break
                await asyncio.sleep(BACKOFF_S * 2 ** (attempt - 1))
                attempt += 1
                try:
                    handle = await self.backend.restart_arm(arm)
                except InfraError as restart_error:
                    log.warning("arm restart failed", error=str(restart_error))
                    continue  # the next attempt fails fast and is counted
                await self.clients[arm].aclose()
                self.clients[arm] = SeamClient(handle.seam_url)
                self.seam_urls[arm] = handle.seam_url
        # The memory controls read the calls the proxy logged for this item's turns.
        await asyncio.to_thread(memory_controls.check, self.turns.path.parent, item, done)
        for record in done:
            self._write(record)
        await self._tell_proxy(arm, None, 0)
        structlog.contextvars.unbind_contextvars("item", "arm")

    async def _attempt(self, item: Item, arm: str, attempt: int, done: list[TurnRecord]) -> None:
        """Run the item's turns on `arm`; records go to `done`. Raises InfraError."""
        client = self.clients[arm]
        # In a thread: pinning waits out libfaketime's cache (up to a second), and the loop
        # must not stop meanwhile (a Ctrl-C, the control client's connection).
        await asyncio.to_thread(self.backend.pin_clock, arm, item.clock)
        session_id = f"{item.id}.{attempt}"
        opened = OpenSession(
            session_id=session_id, item_id=item.id, clock=item.clock, context=item.context
        )
        try:
            await client.open_session(opened)
        except (SeamError, httpx.HTTPError) as e:
            if await self._infra(arm, e):
                raise InfraError(f"opening a session failed: {e}") from e
            for number in range(len(item.turns)):
                done.append(self._record(item, arm, number, attempt, "error", error=str(e)))
            return
        for number, script in enumerate(item.turns):
            if self.stopping and number:
                break  # Ctrl-C: this item's remaining turns are not run (and not recorded)
            await self._tell_proxy(arm, item.id, number)
            turn = Turn(
                turn=number,
                user=script.user,
                addon=script.addon,
                deadline_ms=self.study.deadline_ms,
                clock=item.clock,
            )
            self.turn_strays.clear()
            self.running = (arm, item.id, number)
            try:
                result = await self._collect_watched(arm, client, session_id, turn)
            except StrayConnection as stray:
                error = f"run halted: {stray}"
                if stray.result is not None:  # it ended within the grace: its answer is kept
                    record = self._from_result(item, arm, number, attempt, stray.result)
                    record.outcome, record.error = "stray_connection", error
                else:
                    record = self._record(
                        item, arm, number, attempt, "stray_connection", error=error
                    )
                record.stray_connections = self.turn_strays[arm]
                done.append(record)
                raise
            except (SeamError, httpx.HTTPError) as e:
                if await self._infra(arm, e):
                    raise InfraError(f"turn {number}: {e}") from e
                done.append(self._record(item, arm, number, attempt, "error", error=str(e)))
                continue
            if result.outcome == "broken" and await self._infra(arm, None):
                raise InfraError(f"turn {number}: the arm's process died ({result.error})")
            record = self._from_result(item, arm, number, attempt, result)
            self.tally.last_turn_end[arm] = time.time()  # later strays are its teardown's
            new = await self._new_strays(f"{arm} {item.id} turn {number}")
            self.running = None
            record.stray_connections = self.turn_strays[arm]
            if new and self.halt_on_stray:
                # The turn ended before the watch saw it: its answer is kept, its outcome says
                # why the run stopped.
                halt = StrayConnection(_strongest(new))
                record.outcome, record.error = "stray_connection", f"run halted: {halt}"
                done.append(record)
                raise halt
            done.append(record)
        try:
            await client.close_session(session_id)
        except (SeamError, httpx.HTTPError) as e:
            log.debug("closing the session failed", error=str(e))

    async def _collect_watched(
        self, arm: str, client: SeamClient, session_id: str, turn: Turn
    ) -> TurnResult:
        """The turn, checking every WATCH_S that the arm still runs: a container killed
        mid-turn leaves the seam connection open with nobody behind it (a vanished network
        interface sends no reset), so the stream alone would end only at the deadline."""
        task = asyncio.create_task(client.collect(session_id, turn, self.deadline_s))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=WATCH_S)
                if done:
                    return task.result()
                if not await asyncio.to_thread(self.backend.arm_alive, arm):
                    raise InfraError(f"turn {turn.turn}: the arm died mid-turn")
                if self.halt_on_stray:
                    new = await self._new_strays(f"{arm} turn {turn.turn}")
                    if new:
                        done, _ = await asyncio.wait({task}, timeout=HALT_GRACE_S)
                        ended = done and not task.cancelled() and task.exception() is None
                        result = task.result() if ended else None
                        raise StrayConnection(_strongest(new), result)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def _infra(self, arm: str, error: Exception | None) -> bool:
        """Whether a failure is the machinery's: the process is gone or the seam refused."""
        if isinstance(error, httpx.ConnectError):
            return True
        deadline = time.monotonic() + DEATH_GRACE_S
        while time.monotonic() < deadline:
            if not self.backend.arm_alive(arm):
                return True
            await asyncio.sleep(0.05)
        return False

    async def _new_strays(self, during: str) -> list[dict[str, object]]:
        """Refused connections that appeared since the last look, named in the log as they
        happen (not only at the run's end) and counted per arm in `turn_strays`."""
        entries = await asyncio.to_thread(self.backend.egress_attempts)
        new: list[dict[str, object]] = []
        for entry in entries:
            key = stray_key(entry)
            if key in self.seen_strays:
                continue
            self.seen_strays.add(key)
            new.append(entry)
            self.turn_strays[str(entry.get("arm"))] += 1
            self._note_seen(entry)
            log.warning(
                "stray connection refused",
                stray_arm=entry.get("arm"),
                destination=entry.get("destination"),
                source=entry.get("source"),
                flags=entry.get("flags"),
                during=during,
            )
        return new

    def _note_seen(self, entry: dict[str, object]) -> None:
        """strays_seen.jsonl: the turn running when `entry` was first seen, for the report."""
        seen = StraySeen.of(self.run_id, entry, self.running)
        append_seen(self.turns.path.parent / "strays_seen.jsonl", seen)

    async def _probe(self, phase: ProbePhase) -> None:
        await probe_all(self.rtt, self.run_id, self.seam_urls, self.upstreams, phase)

    async def _halt_if_stray(self) -> None:
        new = await self._new_strays("start-up")
        if new and self.halt_on_stray:
            raise StrayConnection(_strongest(new))

    # --- records ---------------------------------------------------------------------------

    def _from_result(
        self, item: Item, arm: str, number: int, attempt: int, result: TurnResult
    ) -> TurnRecord:
        outcome: TurnOutcome = (
            "done" if result.outcome == "done" else "cut" if result.outcome == "cut" else "error"
        )
        return self._record(
            item,
            arm,
            number,
            attempt,
            outcome,
            text=result.text,
            first_token_s=result.timing.first_token_s,
            last_token_s=result.timing.last_token_s,
            error=result.error,
        )

    def _record(
        self,
        item: Item,
        arm: str,
        number: int,
        attempt: int,
        outcome: TurnOutcome,
        *,
        text: str = "",
        first_token_s: float | None = None,
        last_token_s: float | None = None,
        error: str | None = None,
    ) -> TurnRecord:
        return TurnRecord(
            run=self.run_id,
            item=item.id,
            arm=arm,
            turn=number,
            text=text,
            outcome=outcome,
            first_token_s=first_token_s,
            last_token_s=last_token_s,
            attempts=attempt,
            error=error,
        )

    def _give_up(
        self, item: Item, arm: str, attempt: int, done: list[TurnRecord], error: str
    ) -> None:
        # Turns the last attempt completed keep their outcome; the rest failed for want of an
        # arm, which is the harness's failure, not the arm's.
        for number in range(len(done), len(item.turns)):
            done.append(self._record(item, arm, number, attempt, "infra_failed", error=error))

    def _write(self, record: TurnRecord) -> None:
        self.turns.append(record)
        self.tally.outcomes[record.outcome] += 1
        self.on_turn(record)

    async def _tell_proxy(self, arm: str, item: str | None, turn: int) -> None:
        assert self.control is not None
        # The model the proxy's control endpoint validates with (proxy/control.py).
        message = TurnMessage(arm=arm, item=item, turn=turn)
        try:
            response = await self.control.post(
                "/turn",
                content=message.model_dump_json(by_alias=True),
                headers={"content-type": "application/json"},
            )
            response.raise_for_status()
        except httpx.HTTPError as e:
            # Calls would be logged without their turn: that breaks attribution, so stop.
            raise InfraError(f"the proxy's control endpoint failed: {e}") from e

    # --- Ctrl-C ----------------------------------------------------------------------------

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._interrupt)

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)

    def _interrupt(self) -> None:
        if self.stopping and self._main is not None:
            log.warning("stopping now")
            self._main.cancel()
            return
        self.stopping = True
        self.tally.interrupted = True
        log.warning("stopping after the turn in flight (Ctrl-C again to stop at once)")
