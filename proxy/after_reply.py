"""Work that waits until a streamed reply's end has gone out to the arm.

mitmproxy sends a streamed reply's end (HTTP/1.1's last chunk, HTTP/2's END_STREAM) only after
the `response` hook returns (`HttpStream.send_response` in mitmproxy.proxy.layers.http). By then
every byte of the body has gone out and nothing the hook does can change it, yet an SDK reading
the stream waits for that end: settling and logging the call inside the hook put their
milliseconds on every stream's tail. So the hook hands that work here, and it runs on the event
loop's next turn, just after the end is written.

Nothing is lost or reordered by the wait:
- asyncio runs the callbacks already queued before those of the I/O it polls next, so the work is
  done before the proxy reads another request (from this arm or any other): the next call sees
  the budget settled and, if the call log failed, is refused;
- `flush` runs what is still waiting at shutdown, before anything in flight is settled as cut;
- a crash in between loses no money: the reservation is in the journal, as for any call in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class AfterReply:
    def __init__(self) -> None:
        self._waiting: dict[asyncio.Handle, Callable[[], None]] = {}

    def defer(self, work: Callable[[], None]) -> None:
        """Run `work` on the loop's next turn (at once if no loop is running)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            work()
            return
        handle: asyncio.Handle

        def run() -> None:
            self._waiting.pop(handle, None)
            work()

        handle = loop.call_soon(run)
        self._waiting[handle] = work

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def flush(self) -> None:
        """Run now, in the order deferred, whatever has not run yet (shutdown)."""
        while self._waiting:
            handle, work = next(iter(self._waiting.items()))
            del self._waiting[handle]
            handle.cancel()
            work()
