"""Work that waits until a streamed reply's end has gone out to the arm.

mitmproxy sends a streamed reply's end (HTTP/1.1's last chunk, HTTP/2's END_STREAM) only after
the `response` hook returns (`HttpStream.send_response` in mitmproxy.proxy.layers.http). By then
every byte of the body has gone out and nothing the hook does can change it, yet an SDK reading
the stream waits for that end: settling and logging the call inside the hook put their
milliseconds on every stream's tail. So the hook hands that work here, and it runs on the first
turn of the event loop at which the end has been written (`ready`).

The next turn is not always that turn. On Python 3.12+ mitmproxy runs hook tasks eagerly
(`asyncio.eager_task_factory`, mitmproxy.master): the hook's task starts inside the server event
that raised it, runs the `response` hook at once, then waits for that event's lock to send the end
and resumes only after the callbacks queued meanwhile, this work among them (measured: the booking
ran before the end, most of a millisecond of a stream's tail). So the work checks `ready` (the
addon passes "the flow is no longer live": mitmproxy clears `flow.live` just before it writes the
end) and, if the end is not out yet, waits one more turn, at most `MAX_TURNS`.

A forwarded request's hash and stored body wait the same way, for the request to be written
upstream (the addon passes "the flow has its upstream connection"), so they are off its way in.

Nothing is lost or reordered by the wait:
- asyncio runs the callbacks already queued before those of the I/O it polls next, so the work is
  done before the proxy reads anything that reached it after the end went out: the arm's next
  call, the orchestrator's next `/turn`, any call sent after it: they see the budget settled and,
  if the call log failed, are refused. (A call of another arm already in the proxy when the end
  went out may be read first; it finds this call's reservation still held, the worst case: more
  money counted, never less.)
- `flush` runs what is still waiting at shutdown, before anything in flight is settled as cut;
- a crash in between loses no money: the reservation is in the journal, as for any call in flight.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

# Loop turns the work waits at most for `ready`: none is needed on Python 3.11, one on 3.12+; the
# bound keeps the work of a flow whose end never goes out (a killed flow) from waiting for ever.
MAX_TURNS = 8


class AfterReply:
    def __init__(self) -> None:
        # token -> (the pending loop callback, the work): tokens keep the order work was deferred
        # in, which `flush` follows, however many turns each has waited.
        self._waiting: dict[int, tuple[asyncio.Handle, Callable[[], None]]] = {}
        self._tokens = itertools.count()

    def defer(self, work: Callable[[], None], ready: Callable[[], bool] | None = None) -> None:
        """Run `work` on the first loop turn at which `ready()` holds (at most `MAX_TURNS`
        turns on), or at once if no loop is running."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            work()
            return
        token = next(self._tokens)
        turns = 0

        def run() -> None:
            nonlocal turns
            if ready is not None and not ready() and turns < MAX_TURNS:
                turns += 1
                self._waiting[token] = (loop.call_soon(run), work)
                return
            self._waiting.pop(token, None)
            work()

        self._waiting[token] = (loop.call_soon(run), work)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def flush(self) -> None:
        """Run now, in the order deferred, whatever has not run yet (shutdown)."""
        while self._waiting:
            token = next(iter(self._waiting))
            handle, work = self._waiting.pop(token)
            handle.cancel()
            work()
