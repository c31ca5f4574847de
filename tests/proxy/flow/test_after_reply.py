"""A streamed reply's booking and record wait until its end is out, no longer
(proxy.flow.after_reply).

mitmproxy sends a streamed reply's end only once the `response` hook returns, so the addon does
that hook's work on the loop's next turn. What users rely on: the record is written before the
proxy reads anything else (a later call sees the budget settled, a call-log failure refuses it),
and at shutdown what still waits runs before anything in flight is settled as cut (`flush`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from proxy.flow.after_reply import MAX_TURNS, AfterReply
from tests.proxy.addon_kit import HAIKU, addon_context

STREAMED = {
    "model": HAIKU,
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hello"}],
    "stream": True,
}


async def test_deferred_work_runs_before_anything_queued_after_it() -> None:
    # I/O the loop polls after the hook (the next request, a control message) is queued after
    # the deferred work: it must find the work done.
    after = AfterReply()
    order: list[str] = []
    after.defer(lambda: order.append("booked"))
    asyncio.get_running_loop().call_soon(lambda: order.append("next request read"))
    assert order == [] and after.waiting == 1  # not inside the hook: its end goes out first
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert order == ["booked", "next request read"]
    assert after.waiting == 0


async def test_work_waits_for_the_end_a_hook_task_writes_after_it_was_deferred() -> None:
    # mitmproxy 12 on Python 3.12+: hook tasks run eagerly (asyncio.eager_task_factory) inside
    # the server event that raised the hook, under that event's lock. The task runs the response
    # hook at once, then waits for the lock to write the end, and resumes only after the
    # callbacks queued meanwhile. The booking must still come after the end.
    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)
    try:
        lock = asyncio.Lock()  # mitmproxy's ConnectionHandler._server_event_lock
        after = AfterReply()
        order: list[str] = []
        live = True

        async def hook_task() -> None:
            nonlocal live
            after.defer(lambda: order.append("booked"), ready=lambda: not live)  # the hook
            async with lock:  # server_event(HookCompleted)
                live = False
                order.append("end written")

        async with lock:  # the server event whose data ended the stream
            task = asyncio.create_task(hook_task())
        await task
        for _ in range(3):
            await asyncio.sleep(0)
        assert order == ["end written", "booked"]
        assert after.waiting == 0
    finally:
        loop.set_task_factory(None)


async def test_work_whose_end_never_goes_out_still_runs_after_a_few_turns() -> None:
    # A killed flow stays live: its booking must not wait for ever.
    after = AfterReply()
    done: list[bool] = []
    after.defer(lambda: done.append(True), ready=lambda: False)
    for _ in range(MAX_TURNS):
        await asyncio.sleep(0)
    assert done == [] and after.waiting == 1
    await asyncio.sleep(0)
    assert done == [True] and after.waiting == 0


async def test_flush_runs_what_waits_once_and_in_order() -> None:
    after = AfterReply()
    order: list[int] = []
    for n in range(3):
        # The first waits for an end that has not gone out: it keeps its place all the same.
        after.defer(lambda n=n: order.append(n), ready=lambda n=n: n != 0)
    await asyncio.sleep(0)
    assert order == [1, 2]
    after.defer(lambda: order.append(3))
    after.flush()  # shutdown: what waits runs now, in the order it was deferred
    assert order == [1, 2, 0, 3]
    for _ in range(MAX_TURNS + 1):
        await asyncio.sleep(0)
    assert order == [1, 2, 0, 3]  # the loop's turns do not run them a second time


def test_without_a_running_loop_the_work_runs_at_once() -> None:
    after = AfterReply()
    done: list[bool] = []
    after.defer(lambda: done.append(True))
    assert done == [True] and after.waiting == 0


async def test_a_streamed_call_is_logged_on_the_loop_turn_after_its_end(tmp_path: Path) -> None:
    async with addon_context(tmp_path) as proxy:
        await proxy.send(proxy.flow("/anthropic/v1/messages", STREAMED), loop_turn=False)
        # The response hook has returned; mitmproxy writes the stream's end now.
        assert proxy.calls() == []
        await asyncio.sleep(0)
        (record,) = proxy.calls()
        assert record["stream"] is True and record["outcome"] == "ok"
        assert record["response_chunks"] and len(record["response_chunks"]) > 1
