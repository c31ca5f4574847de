"""A streamed reply's booking and record wait until its end is out, no longer (proxy.after_reply).

mitmproxy sends a streamed reply's end only once the `response` hook returns, so the addon does
that hook's work on the loop's next turn. What users rely on: the record is written before the
proxy reads anything else (a later call sees the budget settled, a call-log failure refuses it),
and at shutdown what still waits runs before anything in flight is settled as cut (`flush`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from proxy.after_reply import AfterReply
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


async def test_flush_runs_what_waits_once_and_in_order() -> None:
    after = AfterReply()
    order: list[int] = []
    for n in range(3):
        after.defer(lambda n=n: order.append(n))
    after.flush()
    assert order == [0, 1, 2]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert order == [0, 1, 2]  # the loop's turn does not run them a second time


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
