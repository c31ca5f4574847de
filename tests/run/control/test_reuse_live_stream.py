"""Reuse hits on a live streamed reply, through a real proxy process (the local backend's, as a
live run starts it) in front of a fake vendor: the leader C0 and its follower C1 send the same
streamed request in the same item and turn; C1 gets C0's bytes, the vendor sees one call, the
ledger books one, and calls.jsonl names the leader's call in the follower's `reuse_of`.

The in-process test kit (tests/proxy/flow/test_reuse.py) never runs live mode's stream tap, which is
what collects a streamed reply's bytes for the follower: this is the test of that path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.isolation.base import ProxyInfo, ProxySettings
from harness.isolation.local import LocalBackend
from harness.run.control.proxy_control import ProxyControl
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import STUDY_KEYS, settled_seqs

pytestmark = pytest.mark.integration

CHAT = "/openai/v1/chat/completions"
ASK = {
    "model": "gpt-4.1-mini",
    "messages": [{"role": "user", "content": "Name three lighthouses, one line each."}],
    "stream": True,
    "stream_options": {"include_usage": True},
    "max_completion_tokens": 64,
}


async def _stream(info: ProxyInfo, arm: str, body: dict[str, Any]) -> bytes:
    """The reply's bytes as the arm reads them off its listener, chunk by chunk."""
    headers = {"authorization": "Bearer placeholder", "x-harness-purpose": "main"}
    client = httpx.AsyncClient(base_url=info.arm_bases[arm], trust_env=False)
    async with client, client.stream("POST", CHAT, json=body, headers=headers, timeout=30) as reply:
        assert reply.status_code == 200, await reply.aread()
        assert reply.headers["content-type"].startswith("text/event-stream")
        parts: list[bytes] = []
        try:
            async for chunk in reply.aiter_raw():
                parts.append(chunk)
        except httpx.RemoteProtocolError:
            pass  # a cut stream: what arrived before the cut
        return b"".join(parts)


def _calls(run_dir: Path, count: int) -> list[dict[str, Any]]:
    """calls.jsonl once it holds `count` lines (a stream is logged as it ends)."""
    import time

    path = run_dir / "calls.jsonl"
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)
    raise AssertionError(f"calls.jsonl has fewer than {count} lines")


async def _leader_then_follower(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: list[str | None]
) -> tuple[bytes, bytes, int, dict[str, dict[str, Any]], list[int]]:
    """C0 then C1 send ASK in item i1 turn 0 through a live proxy: (C0's bytes, C1's bytes,
    the vendor's request count, the calls by arm, the seqs the ledger settled)."""
    for name, key in STUDY_KEYS.items():  # the live proxy's own environment holds the keys
        monkeypatch.setenv(name, key)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with FakeVendor() as vendor:
        vendor.script(script)
        backend = LocalBackend(run_dir, work_dir=tmp_path)
        settings = ProxySettings(
            run_dir=run_dir, run_id="reuse-live", mode="live", arms=["C0", "C1"],
            reuse=["C0=C1"], upstreams=[f"openai={vendor.url}"], cap="5",
            ledger=tmp_path / "ledger.jsonl",
        )  # fmt: skip
        try:
            info = await backend.start_proxy(settings)
            control = ProxyControl(info.control_url)
            try:
                for arm in ("C0", "C1"):
                    await control.tell(arm, "i1", 0)
                leader = await _stream(info, "C0", ASK)
                follower = await _stream(info, "C1", ASK)
                for arm in ("C0", "C1"):  # between turns: every call is logged by now
                    await control.tell(arm, None, 0)
            finally:
                await control.aclose()
        finally:
            await backend.stop()  # the proxy settles its calls in the ledger as it stops
        asked = len(vendor.requests)
    calls = _calls(run_dir, 2)
    by_arm = {c["arm"]: c for c in calls}
    assert sorted(by_arm) == ["C0", "C1"] and len(calls) == 2
    settled = settled_seqs(tmp_path / "ledger.jsonl")
    return leader, follower, asked, by_arm, settled


async def test_a_followers_streamed_request_gets_the_leaders_bytes_booked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leader, follower, asked, calls, settled = await _leader_then_follower(tmp_path, monkeypatch, [])
    assert b"data: [DONE]" in leader and follower == leader  # the same bytes
    assert asked == 1  # the follower's call went to no vendor
    c0, c1 = calls["C0"], calls["C1"]
    assert c0["stream"] and c1["stream"] and c0["outcome"] == c1["outcome"] == "ok"
    assert c1["reuse_of"] == c0["seq"] and "reuse_of" not in c0
    assert c1["request_hash"] == c0["request_hash"]
    assert c1["response_hash"] == c0["response_hash"]
    assert c1["cost_usd"] == "0" and c1["reserved_usd"] == "0" and c0["cost_usd"] != "0"
    assert settled == [c0["seq"]]  # booked once: the leader's call alone


async def test_a_leaders_cut_stream_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vendor cuts the leader's stream: the follower must not get a partial reply as a
    complete one; it is forwarded, and both calls are booked."""
    leader, follower, asked, calls, settled = await _leader_then_follower(
        tmp_path, monkeypatch, ["cut_after=3", None]
    )
    assert b"data: [DONE]" not in leader and b"data: [DONE]" in follower
    assert asked == 2
    assert "reuse_of" not in calls["C1"] and calls["C0"]["outcome"] != "ok"
    assert sorted(settled) == sorted(c["seq"] for c in calls.values())
