"""The retrieval arm as a real process behind a record-mode proxy, driven through the seam."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from arms.client import SeamClient
from arms.recall import counted
from arms.retrieval import Memory, append_store, read_store, recall_block, top_k
from arms.seam import Ingest, IngestMessage, OpenSession, Turn
from tests.arms.arm_process import ArmProcess
from tests.arms.proxy_calls import new_calls, request_body
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

CLOCK = datetime(2024, 5, 1, 10, 0, 0)
SCRIPT = [
    "My sister Ana lives in Lisbon.",
    "I bought a red bicycle yesterday.",
    "Which city does Ana live in?",
]


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    proxy = ProxyProcess(tmp_path_factory.mktemp("proxy") / "run")
    yield proxy
    proxy.stop()


@pytest.fixture(scope="module")
def retrieval(
    proxy: ProxyProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ArmProcess]:
    arm = ArmProcess("arms.retrieval", tmp_path_factory.mktemp("retrieval"), env=proxy.exports)
    yield arm
    arm.stop()


async def test_turns_are_embedded_recalled_and_put_in_the_prompt(
    retrieval: ArmProcess, proxy: ProxyProcess
) -> None:
    before = len(proxy.calls())
    replies = []
    async with SeamClient(retrieval.url) as client:
        await client.open_session(OpenSession(session_id="r", item_id="i", clock=CLOCK))
        for number, user in enumerate(SCRIPT):
            turn = Turn(turn=number, user=user, deadline_ms=60_000, clock=CLOCK)
            result = await client.collect("r", turn, deadline_s=30)
            assert result.outcome == "done" and result.text, (result.error, retrieval.log())
            replies.append(result.text)
        await client.close_session("r")

    # Turn 0: nothing to recall, so chat then store. Later turns: embed the question, chat, store.
    calls = new_calls(proxy, before, 8)
    assert [(c["route"], c["purpose"]) for c in calls] == [
        ("openai.chat", "main"),
        ("openai.embeddings", "embedding"),
        *[
            ("openai.embeddings", "embedding"),
            ("openai.chat", "main"),
            ("openai.embeddings", "embedding"),
        ]
        * 2,
    ]
    assert all(c["stream"] for c in calls if c["purpose"] == "main")

    last_chat = request_body(proxy, calls[-2])
    system, question = last_chat["messages"]
    assert "Wednesday, 01 May 2024" in system["content"]
    # Both earlier turns, user and reply, are in the prompt (top-3 of 2 stored turns).
    assert f"[turn 0]\nUser: {SCRIPT[0]}\nAssistant: {replies[0]}" in system["content"]
    assert counted(system["content"]) == (3, 2)  # its own top-k, two memories shown
    assert f"User: {SCRIPT[1]}" in system["content"]
    # Only the current message is sent as a message: memory comes from retrieval alone.
    assert question == {"role": "user", "content": SCRIPT[2]}

    stored = request_body(proxy, calls[-1])
    # Each message embedded alone: a long reply does not drown a short fact (`combined`).
    assert stored["input"] == [f"User: {SCRIPT[2]}", f"Assistant: {replies[2]}"]
    assert stored["model"] == "text-embedding-3-small"


def test_top_k_ranks_by_cosine_and_shows_oldest_first() -> None:
    memories = [
        Memory(0, "north", (1.0, 0.0), 0),
        Memory(1, "east", (0.0, 1.0), 1),
        Memory(2, "north-east", (0.7, 0.7), 2),
        Memory(3, "also north", (2.0, 0.0), 3),  # same direction as turn 0: a tie on cosine
    ]
    assert [m.turn for m in top_k((1.0, 0.1), memories, 2)] == [0, 3]
    assert [m.turn for m in top_k((1.0, 0.1), memories, 3)] == [0, 2, 3]
    assert [m.turn for m in top_k((0.0, 1.0), memories, 1)] == [1]
    # A tie keeps the earlier turn, so the same script picks the same memories every run.
    assert [m.turn for m in top_k((1.0, 0.0), memories, 1)] == [0]
    assert recall_block([], 3) == ""


def test_the_store_is_appended_each_memory_written_once_and_read_back_in_order(
    tmp_path: Path,
) -> None:
    store = tmp_path / "h.jsonl"
    memories = [Memory(None, f"session {n} text", (0.5, -0.25, float(n)), n) for n in range(40)]
    growth = []
    for start in range(0, 40, 8):  # five ingestions of eight memories of one size
        before = store.stat().st_size if store.exists() else 0
        append_store(store, memories[start : start + 8])
        growth.append(store.stat().st_size - before)
    # Each ingestion adds its own memories only (a rewrite would grow by all of them so far).
    assert max(growth) <= 1.05 * min(growth), growth
    assert read_store(store) == memories
    assert len(store.read_text().splitlines()) == 40
    assert read_store(tmp_path / "none.jsonl") == []


def test_a_line_cut_by_a_crash_is_not_a_memory(tmp_path: Path) -> None:
    store = tmp_path / "h.jsonl"
    append_store(store, [Memory(None, "kept", (1.0,), 0)])
    with store.open("a") as f:
        f.write('{"turn": null, "text": "cut')  # the write a killed arm left half done
    assert read_store(store) == [Memory(None, "kept", (1.0,), 0)]


_WORDS = (
    "the a to and of I you it is in that for my on with was have be this but we can so what "
    "not at just like about if your they do get all one or would there out will up me when "
    "garden recipe travel budget laptop concert museum hiking sister weekend project coffee "
    "bicycle library podcast painting apartment vacation keyboard festival journal camera "
    "birthday dinner flight hotel movie book teacher office friend dog kitchen train market"
)
WORDS = _WORDS.split()
FACT = "The new bike cost me {n} dollars."


def _history(sessions: int) -> list[Ingest]:
    """Sessions of four exchanges whose messages run 130 random words (LongMemEval-S's run
    long), the fact said in two of them (a knowledge update: both reach the answer)."""
    rng = random.Random(7)
    out = []
    for n in range(sessions):
        messages = []
        for k in range(4):
            said = " ".join(rng.choices(WORDS, k=130)).capitalize() + "."
            if (n, k) in ((sessions // 4, 1), (3 * sessions // 4, 2)):
                said = FACT.format(n=1000 + n)
            reply = " ".join(rng.choices(WORDS, k=130)).capitalize() + "."
            messages += [
                IngestMessage(role="user", content=said),
                IngestMessage(role="assistant", content=reply),
            ]
        date = datetime(2023, 1, 1 + n, 9, 0)
        out.append(Ingest(session_id=f"s{n}", date=date, messages=messages, deadline_ms=60_000))
    return out


async def test_a_short_fact_among_long_messages_reaches_the_answer_call(
    retrieval: ArmProcess, proxy: ProxyProcess
) -> None:
    """Each message is embedded alone (`combined`): among 80 exchanges of 130-word messages,
    both that hold the fact are recalled for the question, on the stub's default (static)
    vectors. Embedded as one text each, the long reply outweighed the fact: ranked 6th and
    15th, neither reached the top 3."""
    async with SeamClient(retrieval.url) as client:
        await client.open_session(OpenSession(session_id="h", item_id="q", clock=CLOCK))
        for session in _history(20):
            result = await client.ingest("h", session, deadline_s=60)
            assert result.outcome == "done", (result, retrieval.log())
        before = len(proxy.calls())
        turn = Turn(turn=0, user="How much did the new bike cost?", deadline_ms=60_000, clock=CLOCK)
        done = await client.collect("h", turn, deadline_s=30)
        assert done.outcome == "done", (done.error, retrieval.log())
        await client.close_session("h")
    calls = new_calls(proxy, before, 3)
    [answer] = [c for c in calls if c["purpose"] == "main"]
    system = request_body(proxy, answer)["messages"][0]["content"]
    assert f"session s5)\nUser: {FACT.format(n=1005)}" in system
    assert f"session s15)\nUser: {FACT.format(n=1015)}" in system
