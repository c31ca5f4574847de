"""The bare arm as a real process behind a record-mode proxy, driven through the seam."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from arms.bare import WINDOW
from arms.client import SeamClient
from arms.seam import OpenSession, Turn
from tests.arms.arm_process import ArmProcess
from tests.arms.proxy_calls import new_calls, request_body
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

CLOCK = datetime(2024, 5, 1, 10, 0, 0)
SHOWN_DATE = "Wednesday, 01 May 2024"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    proxy = ProxyProcess(tmp_path_factory.mktemp("proxy") / "run")
    yield proxy
    proxy.stop()


def start_arm(proxy: ProxyProcess, log_dir: Path, **env: str) -> ArmProcess:
    return ArmProcess("arms.bare", log_dir, env={**proxy.exports, **env})


@pytest.fixture(scope="module")
def bare(proxy: ProxyProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmProcess]:
    arm = start_arm(proxy, tmp_path_factory.mktemp("bare"))
    yield arm
    arm.stop()


async def drive(arm: ArmProcess, session_id: str, users: list[str], addon: str = "") -> list[str]:
    async with SeamClient(arm.url) as client:
        await client.open_session(OpenSession(session_id=session_id, item_id="i", clock=CLOCK))
        replies = []
        for number, user in enumerate(users):
            turn = Turn(turn=number, user=user, addon=addon, deadline_ms=60_000, clock=CLOCK)
            result = await client.collect(session_id, turn, deadline_s=30)
            assert result.outcome == "done", (result.error, arm.log())
            assert result.text
            replies.append(result.text)
        await client.close_session(session_id)
        return replies


SCRIPT = ["My sister lives in Lisbon.", "I am flying there in June.", "Where does she live?"]


async def test_three_turns_one_streamed_main_call_each(
    bare: ArmProcess, proxy: ProxyProcess
) -> None:
    before = len(proxy.calls())
    replies = await drive(bare, "three", SCRIPT, addon="Answer in one sentence.")
    calls = new_calls(proxy, before, 3)
    assert [(c["route"], c["purpose"], c["stream"]) for c in calls] == [
        ("openai.chat", "main", True)
    ] * 3
    assert all(c["model_requested"] == "gpt-4.1-mini" for c in calls)

    last = request_body(proxy, calls[-1])
    system, *messages = last["messages"]
    assert system["role"] == "system" and SHOWN_DATE in system["content"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2 + ["user"]
    assert messages[0]["content"] == f"{SCRIPT[0]}\n\nAnswer in one sentence."
    assert [messages[1]["content"], messages[3]["content"]] == replies[:2]
    assert "tools" not in last

    # The same script in a new session sends byte-for-byte the same requests.
    await drive(bare, "again", SCRIPT, addon="Answer in one sentence.")
    again = new_calls(proxy, before + 3, 3)
    assert [c["request_hash"] for c in again] == [c["request_hash"] for c in calls]


async def test_window_drops_the_61st_message(bare: ArmProcess, proxy: ProxyProcess) -> None:
    turns = WINDOW // 2 + 1  # 31 user messages and 30 replies: 61 messages by the last turn
    before = len(proxy.calls())
    await drive(bare, "long", [f"message number {i}" for i in range(turns)])
    calls = new_calls(proxy, before, turns)
    _, *sent = request_body(proxy, calls[-1])["messages"]
    assert len(sent) == WINDOW
    assert sent[0]["role"] == "assistant" and sent[1]["content"] == "message number 1"
    assert sent[-1]["content"] == f"message number {turns - 1}"
    assert not any(m["content"] == "message number 0" for m in sent)
    # One turn earlier the conversation still fitted whole.
    _, *fitted = request_body(proxy, calls[-2])["messages"]
    assert len(fitted) == WINDOW - 1 and fitted[0]["content"] == "message number 0"


async def test_anthropic_subject_speaks_the_messages_api(
    proxy: ProxyProcess, tmp_path: Path
) -> None:
    # A window of 4 makes the cut land on an assistant message, which the arm must skip.
    arm = start_arm(proxy, tmp_path, ARM_MODEL="claude-haiku-4-5-20251001", ARM_WINDOW="4")
    try:
        before = len(proxy.calls())
        replies = await drive(arm, "claude", SCRIPT)
    finally:
        arm.stop()
    calls = new_calls(proxy, before, 3)
    assert [(c["route"], c["purpose"], c["stream"]) for c in calls] == [
        ("anthropic.messages", "main", True)
    ] * 3
    last = request_body(proxy, calls[-1])
    assert last["model"] == "claude-haiku-4-5-20251001"
    assert SHOWN_DATE in last["system"]
    assert [m["content"] for m in last["messages"]] == [SCRIPT[1], replies[1], SCRIPT[2]]
