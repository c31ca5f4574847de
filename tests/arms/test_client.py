"""SeamClient against a real toy arm process: parsed lines, latencies, cuts, refusals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from arms.client import SeamClient, SeamError
from arms.seam import Delta, Done, OpenSession, Turn
from tests.arms.arm_process import ArmProcess
from tests.arms.toy_arm import SLOW_GAP_S

CLOCK = datetime(2024, 5, 1, 10, 0, 0)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmProcess]:
    arm = ArmProcess("tests.arms.toy_arm", tmp_path_factory.mktemp("toy"))
    yield arm
    arm.stop()


def session(session_id: str) -> OpenSession:
    return OpenSession(session_id=session_id, item_id="item-1", clock=CLOCK)


def turn(user: str, number: int = 0) -> Turn:
    return Turn(turn=number, user=user, deadline_ms=60_000, clock=CLOCK)


async def test_health_and_session_lifecycle(toy: ArmProcess) -> None:
    async with SeamClient(toy.url) as client:
        health = await client.health()
        assert (health.seam, health.arm) == (2, "toy")
        await client.open_session(session("life"))
        with pytest.raises(SeamError, match="already open") as duplicate:
            await client.open_session(session("life"))
        assert duplicate.value.status == 409
        await client.close_session("life")
        with pytest.raises(SeamError, match="POST /sessions first") as unknown:
            await client.close_session("life")
        assert unknown.value.status == 404


async def test_turn_yields_parsed_lines_and_measures_latency(toy: ArmProcess) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(session("slow"))
        async with client.turn("slow", turn("slow")) as stream:
            lines = [line async for line in stream]
        assert lines == [Delta(text="first "), Delta(text="second"), Done(text="first second")]
        assert stream.outcome == "done" and stream.text == "first second"
        first, last = stream.timing.first_token_s, stream.timing.last_token_s
        assert first is not None and last is not None
        assert 0 < first <= last
        # The arm waits SLOW_GAP_S between its two deltas; the timer must see that gap (the
        # first token stamped as it came, not with the last; no upper wall-clock bound).
        assert last - first >= SLOW_GAP_S * 0.9


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\x1c", "\x0b", "\x0c"])
async def test_a_reply_holding_a_unicode_line_separator_arrives_whole(
    toy: ArmProcess, separator: str
) -> None:
    # A JSON string may hold these raw and str.splitlines() (httpx's aiter_lines) ends a line
    # at each: the stream is framed at "\n" only, or the turn failed as the arm's fault.
    text = f"one{separator}two{separator}"
    async with SeamClient(toy.url) as client:
        await client.open_session(session(f"sep{ord(separator)}"))
        result = await client.collect(f"sep{ord(separator)}", turn(f"say {text}"))
    assert (result.outcome, result.error, result.text) == ("done", None, text)


async def test_one_delta_turn_has_equal_first_and_last(toy: ArmProcess) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(session("one"))
        result = await client.collect("one", turn("echo single"))
        assert result.outcome == "done" and result.text == "single "
        assert result.timing.first_token == result.timing.last_token


async def test_arm_error_is_an_outcome_with_partial_text(toy: ArmProcess) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(session("boom"))
        result = await client.collect("boom", turn("boom"))
        assert result.outcome == "error"
        assert result.error == "RuntimeError: kaboom" and result.text == "partial "


async def test_deadline_cuts_the_turn_keeps_partial_and_cancels_the_arm(toy: ArmProcess) -> None:
    async with SeamClient(toy.url) as client:
        await client.open_session(session("hang"))
        started = time.monotonic()
        result = await client.collect("hang", turn("hang", 0), deadline_s=0.5)
        elapsed = time.monotonic() - started
        assert result.outcome == "cut" and result.text == "partial "
        # Cut at the deadline, not after it: the arm hangs for an hour (no upper wall-clock
        # bound, which a loaded machine breaks; the outcome says it was not waited for).
        assert elapsed >= 0.5
        assert result.timing.first_token_s is not None and result.timing.first_token_s <= elapsed
        # Closing the connection cancelled the arm's turn; the session still takes turns.
        report = ""
        for _ in range(50):
            report = (await client.collect("hang", turn("events", 1))).text
            if "hang 0 ended" in report:
                break
            await asyncio.sleep(0.05)
        assert "hang 0 ended" in report


async def test_turn_on_unknown_session_raises_before_streaming(toy: ArmProcess) -> None:
    async with SeamClient(toy.url) as client:
        with pytest.raises(SeamError, match="404") as refused:
            async with client.turn("ghost", turn("echo x")):
                pytest.fail("a refused turn must not yield a stream")
        assert refused.value.status == 404
