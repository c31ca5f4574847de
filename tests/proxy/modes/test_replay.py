"""Replay mode through a real proxy process and the official SDKs: recorded replies come back
byte for byte (plain and streamed, chunk for chunk), repeats are served in order until the
recording runs out, and a request the recording does not have is a typed SDK error and a
`replay_miss` record, never a call to anywhere else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
MINI = "gpt-4.1-mini"
USER: Any = [{"role": "user", "content": "Remember that my sister lives in Lisbon."}]
OTHER: Any = [{"role": "user", "content": "A question the recording never saw."}]


def _exchange(proxy: ProxyProcess) -> dict[str, bytes]:
    """One of each reply kind, as raw bytes the SDK received."""
    ant = proxy.anthropic()
    oai = proxy.openai()
    out: dict[str, bytes] = {}
    raw = ant.messages.with_raw_response.create(model=HAIKU, max_tokens=200, messages=USER)
    out["anthropic plain"] = raw.http_response.content
    with ant.messages.with_streaming_response.create(
        model=HAIKU, max_tokens=200, messages=USER, stream=True
    ) as streamed:
        out["anthropic stream"] = b"".join(streamed.iter_bytes())
    chat = USER
    raw_chat = oai.chat.completions.with_raw_response.create(model=MINI, messages=chat)
    out["openai plain"] = raw_chat.http_response.content
    with oai.chat.completions.with_streaming_response.create(
        model=MINI, messages=chat, stream=True, stream_options={"include_usage": True}
    ) as streamed_chat:
        out["openai stream"] = b"".join(streamed_chat.iter_bytes())
    raw_embed = oai.embeddings.with_raw_response.create(model="text-embedding-3-small", input="x")
    out["openai embedding"] = raw_embed.http_response.content
    # Parsed by the SDKs too (the same requests again: served from their second recording).
    with ant.messages.stream(model=HAIKU, max_tokens=200, messages=USER) as parsed:
        out["anthropic stream parsed"] = parsed.get_final_text().encode()
    parts = oai.chat.completions.create(
        model=MINI, messages=chat, stream=True, stream_options={"include_usage": True}
    )
    out["openai stream parsed"] = "".join(
        c.choices[0].delta.content or "" for c in parts if c.choices
    ).encode()
    # The same request again: the recording holds it twice, so the replay can serve it twice.
    out["anthropic plain again"] = ant.messages.with_raw_response.create(
        model=HAIKU, max_tokens=200, messages=USER
    ).http_response.content
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    run = tmp_path_factory.mktemp("recorded") / "run"
    proxy = ProxyProcess(run)
    try:
        replies = _exchange(proxy)
        proxy.calls(at_least=len(replies))
    finally:
        assert proxy.stop() == 0
    return run, replies


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]


def test_every_reply_is_served_again_byte_for_byte(
    recorded: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    source, before = recorded
    # No vendor key anywhere and no upstream: replay needs neither.
    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    proxy = ProxyProcess(
        tmp_path / "replay", "--mode", "replay", "--replay-from", str(source), env=env
    )
    try:
        after = _exchange(proxy)
        calls = proxy.calls(at_least=len(after))
    finally:
        assert proxy.stop() == 0
    assert after == before
    recorded_calls = sorted(_lines(source), key=lambda c: c["seq"])
    replayed = sorted(calls, key=lambda c: c["seq"])
    assert [c["mode"] for c in replayed] == ["replay"] * len(before)
    assert {c["outcome"] for c in replayed} == {"ok"}
    for old, new in zip(recorded_calls, replayed, strict=True):
        assert new["request_hash"] == old["request_hash"]
        assert new["response_hash"] == old["response_hash"]
        # Streams are played in the recorded chunks, not as one body.
        assert new["response_chunks"] == old["response_chunks"]
        assert new["flags"] == [f"replay_of={old['seq']}"]
        assert new["cost_usd"] == "0"
    assert any(c["stream"] and len(c["response_chunks"]) > 2 for c in replayed)


def test_a_miss_is_a_typed_error_and_a_logged_replay_miss(
    recorded: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    source, _ = recorded
    proxy = ProxyProcess(tmp_path / "replay", "--mode", "replay", "--replay-from", str(source))
    try:
        # Retries allowed: the miss tells the SDK not to retry, so it is sent (and logged) once.
        ant = anthropic.Anthropic(base_url=proxy.anthropic_base, api_key="x", max_retries=2)
        with pytest.raises(anthropic.ConflictError) as ant_miss:
            ant.messages.create(model=HAIKU, max_tokens=200, messages=OTHER)
        assert "no recorded response" in ant_miss.value.message
        oai = openai.OpenAI(base_url=proxy.openai_base, api_key="x", max_retries=2)
        chat: Any = OTHER
        with pytest.raises(openai.ConflictError) as oai_miss:
            oai.chat.completions.create(model=MINI, messages=chat, stream=True)
        assert "no recorded response" in oai_miss.value.message
        # Recorded twice, asked three times: the third is a miss, not the last reply again.
        for _ in range(2):
            ant.messages.create(model=HAIKU, max_tokens=200, messages=USER)
        with pytest.raises(anthropic.ConflictError):
            ant.messages.create(model=HAIKU, max_tokens=200, messages=USER)
        calls = sorted(proxy.calls(at_least=5), key=lambda c: c["seq"])
        ant.close()
        oai.close()
    finally:
        assert proxy.stop() == 0
    assert [c["outcome"] for c in calls] == [
        "replay_miss",
        "replay_miss",
        "ok",
        "ok",
        "replay_miss",
    ]
    misses = [c for c in calls if c["outcome"] == "replay_miss"]
    assert {c["status"] for c in misses} == {409}
    assert ant_miss.value.message.count(misses[0]["request_hash"]) == 1


def test_replay_refuses_a_directory_without_a_call_log(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"no calls\.jsonl"):
        ProxyProcess(tmp_path / "replay", "--mode", "replay", "--replay-from", str(tmp_path))


def test_a_live_run_replays_with_no_key_and_the_vendor_gone(tmp_path: Path) -> None:
    """Live records keep what the arm was sent (metered streams as relayed), not the stubs'
    content types: the replay must still hand every SDK the same bytes."""
    with FakeVendor() as vendor:
        live = start_live_proxy(tmp_path, vendor)
        try:
            before = _exchange(live)
            live.calls(at_least=len(before))
        finally:
            assert live.stop() == 0
        assert len(vendor.requests) == len(before)
    # The vendor is stopped: a call that escaped the replay would fail, not succeed quietly.
    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    source = tmp_path / "run"
    proxy = ProxyProcess(
        tmp_path / "replay", "--mode", "replay", "--replay-from", str(source), env=env
    )
    try:
        after = _exchange(proxy)
        calls = proxy.calls(at_least=len(after))
    finally:
        assert proxy.stop() == 0
    assert after == before
    assert {c["outcome"] for c in calls} == {"ok"} and {c["cost_usd"] for c in calls} == {"0"}
    assert [c["mode"] for c in _lines(source)] == ["live"] * len(before)


def _stream_until_it_breaks(proxy: ProxyProcess) -> tuple[bytes, str]:
    """The bytes an OpenAI SDK stream delivered, and how it ended."""
    received: list[bytes] = []
    try:
        with proxy.openai().chat.completions.with_streaming_response.create(
            model=MINI, messages=USER, stream=True, stream_options={"include_usage": True}
        ) as streamed:
            for part in streamed.iter_bytes():
                received.append(part)
    except (openai.APIConnectionError, httpx2.TransportError) as e:
        return b"".join(received), f"broken: {type(e).__name__}"
    return b"".join(received), "complete"


def test_a_stream_the_vendor_cut_is_replayed_cut_after_the_same_bytes(tmp_path: Path) -> None:
    with FakeVendor() as vendor:
        live = start_live_proxy(tmp_path, vendor)
        try:
            vendor.script(["cut_after=4"])
            before = _stream_until_it_breaks(live)
            (recorded,) = live.calls(at_least=1)
        finally:
            assert live.stop() == 0
    assert recorded["outcome"] == "upstream_cut" and before[1].startswith("broken"), before
    assert recorded["response_content_type"].startswith("text/event-stream")
    env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    proxy = ProxyProcess(
        tmp_path / "replay", "--mode", "replay", "--replay-from", str(tmp_path / "run"), env=env
    )
    try:
        after = _stream_until_it_breaks(proxy)
        (replayed,) = proxy.calls(at_least=1)
    finally:
        assert proxy.stop() == 0
    assert after == before
    assert replayed["outcome"] == "upstream_cut" and "cut" in replayed["flags"]
