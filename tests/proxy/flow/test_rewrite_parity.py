"""Parity of the sampling rewrite across modes (issue 25 item 6): one function
(proxy.flow.sampling.pin_call, run by the addon) rewrites a main call in record, replay and live
mode alike, so the body a record run's stub answers is the body a live run forwards; a memory
call is never rewritten; the call log keeps the arm's request as sent (so replay still matches it)
plus the rewrites, and `rundir.calls.rewrites.as_sent` rebuilds the body that went out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rundir.calls.bodies import BodyStore
from rundir.calls.calllog import Rewrite
from rundir.calls.rewrites import as_sent
from tests.fakevendor.server import FakeVendor
from tests.proxy.addon_kit import addon_context
from tests.proxy.live_helpers import STUDY_KEYS, live_options

CHAT = "/openai/v1/chat/completions"
PINS = "[pins]\ntemperature = 0.0\nseed = 7\n"


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture(autouse=True)
def study_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in STUDY_KEYS.items():
        monkeypatch.setenv(name, key)


def pins_file(tmp_path: Path, text: str = PINS) -> str:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return str(path)


def rewrites(record: dict[str, Any]) -> list[Rewrite]:
    return [Rewrite(**r) for r in record["rewrites"]]


async def test_record_and_live_send_the_same_body_for_a_main_call_and_leave_memory_alone(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    vendor.reset()
    main = ask("Hello", temperature=0.9, max_tokens=20000)
    memory = ask("Summarise the chat", temperature=0.9, max_tokens=20000)
    memory_header = {"x-harness-purpose": "memory"}
    pins = pins_file(tmp_path)
    async with addon_context(tmp_path / "record", harness_pins=pins) as record:
        assert (await record.call(CHAT, main))[0] == 200
        assert (await record.call(CHAT, memory, headers=memory_header))[0] == 200
    async with addon_context(
        tmp_path / "live", harness_pins=pins, **live_options(tmp_path, vendor)
    ) as live:
        assert (await live.call(CHAT, main))[0] == 200
        assert (await live.call(CHAT, memory, headers=memory_header))[0] == 200
    recorded, metered = record.calls(), live.calls()
    forwarded = [r.body for r in vendor.requests]
    # The main call: pinned and capped alike in both modes, and what record mode logged as
    # rewritten is exactly what live mode forwarded.
    assert rewrites(recorded[0]) == rewrites(metered[0]) != []
    assert {r.field for r in rewrites(recorded[0])} == {"temperature", "seed", "max_tokens"}
    assert as_sent(main, rewrites(recorded[0])) == forwarded[0]
    assert forwarded[0]["temperature"] == 0.0 and forwarded[0]["max_tokens"] == 6000
    # The memory call: never rewritten, forwarded byte for byte as the arm sent it.
    assert recorded[1]["purpose"] == metered[1]["purpose"] == "memory"
    assert recorded[1]["rewrites"] == metered[1]["rewrites"] == []
    assert forwarded[1] == memory
    # The call log keeps the arm's request (its hash is mode-independent; replay matches it).
    assert [r["request_hash"] for r in recorded] == [r["request_hash"] for r in metered]
    kept = BodyStore(tmp_path / "record" / "bodies").get(recorded[0]["request_body"])
    assert json.loads(kept) == main


async def test_a_pin_conflict_is_refused_in_record_mode_as_in_live(tmp_path: Path) -> None:
    # Temperature above Anthropic's maximum: the rewrite cannot make the request valid.
    pins = pins_file(tmp_path, "[pins]\ntemperature = 1.5\n")
    body = {
        "model": "claude-haiku-4-5-20251001",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    }
    async with addon_context(tmp_path / "record", harness_pins=pins) as record:
        status, reply, _ = await record.call("/anthropic/v1/messages", body)
    assert status == 400 and "temperature" in reply["error"]["message"]
    (call,) = record.calls()
    assert call["outcome"] == "refused"


async def test_replay_of_a_rewritten_record_run_matches_and_logs_the_same_rewrites(
    tmp_path: Path,
) -> None:
    pins = pins_file(tmp_path)
    main = ask("Hello", temperature=0.9)
    async with addon_context(tmp_path / "record", harness_pins=pins) as record:
        status, first, _ = await record.call(CHAT, main)
    async with addon_context(
        tmp_path / "replay",
        harness_pins=pins,
        harness_mode="replay",
        harness_replay_from=str(tmp_path / "record"),
    ) as replay:
        status, again, _ = await replay.call(CHAT, main)
    assert status == 200 and again == first
    (recorded,), (replayed,) = record.calls(), replay.calls()
    assert replayed["outcome"] == "ok" and replayed["rewrites"] == recorded["rewrites"] != []


async def test_a_bad_pins_file_stops_the_proxy_in_record_mode(tmp_path: Path) -> None:
    pins = pins_file(tmp_path, "[pins]\noutput_cap = -5\n")
    with pytest.raises(Exception, match="output_cap"):
        async with addon_context(tmp_path / "record", harness_pins=pins):
            pass
