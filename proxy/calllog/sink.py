"""The run's call log as the addon writes it: calls.jsonl and bodies/, durable, fail closed.

Every finished call gets one record (proxy.calllog.record); a background task fsyncs the log every
`harness_sync_interval`. The first write or fsync that fails stops the proxy serving: from then on
every call is refused with the vendor's 503, because a call let through unrecorded could not be
accounted for.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Literal

import structlog

from proxy.calllog.record import build_record, store_response
from proxy.flow import CallState
from rundir.calls import UNSTORED_FLAGS, BodyStore, CallLog, CallLogError
from vendors.errors import error_reply
from vendors.reply import VendorReply

log = structlog.get_logger("harness.proxy")


class CallSink:
    def __init__(self) -> None:
        self.calls: CallLog | None = None
        self.bodies: BodyStore | None = None
        # Set when the call log cannot be written: from then on every call is refused.
        self.failed: str | None = None
        self._sync_task: asyncio.Task[None] | None = None

    def open(self, run_dir: Path) -> None:
        """Write to `run_dir` (OSError if it cannot be written)."""
        self.calls = CallLog(run_dir / "calls.jsonl")
        self.bodies = BodyStore(run_dir / "bodies")

    def next_seq(self) -> int:
        return self.calls.next_seq() if self.calls else 0

    def start(self, interval: float) -> None:
        self._sync_task = asyncio.create_task(self._sync_loop(interval))

    async def _sync_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await asyncio.to_thread(self.sync)
            except (CallLogError, OSError) as e:
                self.fail(f"call log cannot be made durable: {e}")

    def stop(self) -> None:
        if self._sync_task:
            self._sync_task.cancel()

    def sync(self) -> None:
        if self.bodies:
            self.bodies.sync()
        if self.calls:
            self.calls.sync()

    def sync_quietly(self) -> None:
        """At shutdown: a sync that fails now has nothing left to refuse."""
        with contextlib.suppress(CallLogError, OSError):
            self.sync()

    def close(self) -> None:
        self.sync_quietly()
        if self.calls:
            self.calls.close()
        if self.bodies:
            self.bodies.close()

    def fail(self, why: str) -> None:
        if not self.failed:  # the first failure is the cause; later ones follow from it
            log.error("proxy stopped serving calls", reason=why)
            self.failed = why

    def refusal(self, state: CallState) -> VendorReply | None:
        """The vendor's 503 once the proxy has stopped serving, else None."""
        if not self.failed:
            return None
        state.outcome = "proxy_error"
        return error_reply(state.vendor, 503, f"harness proxy stopped: {self.failed}")

    def append(
        self,
        state: CallState,
        status: int,
        first_byte: float | None,
        end: float,
        *,
        run_id: str,
        mode: Literal["record", "live", "replay"],
    ) -> bool:
        """Append the call's record; False (and the proxy stops serving) if it cannot."""
        if self.calls is None or state.logged:
            return True
        state.logged = True
        # A body that cannot be stored costs its record nothing: the record (what was asked,
        # served, booked) is still written, flagged, and then the proxy stops serving.
        unstored: OSError | None = None
        try:
            response_hash = store_response(state, self.bodies)
        except OSError as e:
            unstored, response_hash = e, None
            state.flags.append(UNSTORED_FLAGS["response_hash"])
        try:
            record = build_record(
                state,
                status,
                first_byte,
                end,
                run_id=run_id,
                mode=mode,
                response_hash=response_hash,
                ref=state.turn,
            )
            self.calls.append(record)
            if unstored is not None:
                self.fail(f"cannot store response body: {unstored}")
                return False
            return True
        except (CallLogError, OSError) as e:
            self.fail(str(e))
            return False
        except Exception as e:
            # A record that cannot be built is a call that cannot be accounted for: fail closed.
            log.exception("call record failed", seq=state.seq)
            self.fail(f"cannot write the record of call {state.seq}: {type(e).__name__}")
            return False
