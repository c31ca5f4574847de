"""Live mode through the addon's hooks in mitmproxy's test kit (tests/proxy/addon_kit.py), in
front of a fake vendor.

A live call goes out before its request is hashed and its body stored (proxy.flow.intake
`keep_request`, off the request's way in). What users rely on: its record still holds the hash
record mode gives the same request and the body as sent; and a body that cannot be stored then
stops the proxy forwarding anything more, for good (fail closed), with the call already out
flagged in its record.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import eventsequence
from mitmproxy.test import tflow

from proxy.flow.after_reply import MAX_TURNS
from rundir.calls.bodies import BodyStore
from rundir.calls.journal import JournalBlock, JournalCall, read_journal, recover_spend
from tests.fakevendor.server import FakeVendor
from tests.proxy.addon_kit import addon_context
from tests.proxy.live_helpers import STUDY_KEYS, live_options
from tests.proxy.small_disk import fill, mounted_tmpfs

CHAT = "/openai/v1/chat/completions"
PAGE = 4096


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-4.1-mini",
        "max_tokens": 32,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


@pytest.fixture(autouse=True)
def study_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in STUDY_KEYS.items():
        monkeypatch.setenv(name, key)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_a_live_calls_record_has_its_requests_hash_and_body(
    tmp_path: Path, vendor: FakeVendor, stream: bool
) -> None:
    body = ask("Hello", stream=stream, user="arm-7", metadata={"trace": "t-1"})
    async with addon_context(tmp_path / "record", harness_masks=["metadata.trace"]) as record:
        await record.call(CHAT, body)
    async with addon_context(
        tmp_path / "live", harness_masks=["metadata.trace"], **live_options(tmp_path, vendor)
    ) as live:
        status, _, flow = await live.call(CHAT, body)
    assert status == 200, flow.response.content
    (recorded,), (metered,) = record.calls(), live.calls()
    assert metered["outcome"] == "ok" and metered["mode"] == "live"
    assert metered["request_hash"] == recorded["request_hash"] != ""
    kept = BodyStore(tmp_path / "live" / "bodies").get(metered["request_body"])
    assert json.loads(kept) == body  # the body as the arm sent it, masked fields and all
    assert "request_body_unstored" not in metered["flags"]


async def test_a_body_that_cannot_be_stored_after_the_call_went_out_stops_the_proxy(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    run = tmp_path / "run"
    vendor.reset()
    # Only the body store's disk fills up: the reservation journal and the call log still work,
    # so the call is forwarded and it is the late store that fails.
    with mounted_tmpfs(run / "bodies"):
        async with addon_context(run, **live_options(tmp_path, vendor)) as live:
            first, _, _ = await live.call(CHAT, ask("Hello"))
            fill(run / "bodies")
            # Random text: its compressed frame needs pages the disk no longer has.
            big = ask(secrets.token_hex(8192))
            out, _, _ = await live.call(CHAT, big)
            later, refused, _ = await live.call(CHAT, ask("Hello again"))
            forwarded = len(vendor.requests)
        records = live.calls()
        # Once there is room again, the pack still reads whole: no torn record was left in it.
        (run / "bodies" / "filler").unlink()
        kept = BodyStore(run / "bodies").get(records[0]["request_body"])
    assert first == 200
    # The second call was out before its store failed; its reply could not be kept either, so
    # the arm is refused it (a reply is never served that the log does not hold).
    assert out == 503
    assert later == 503 and "cannot store request body" in refused["error"]["message"]
    assert forwarded == 2  # nothing was forwarded once the store had failed
    assert [r["status"] for r in records] == [200, 200, 503]
    unstored = records[1]
    assert {"request_body_unstored", "response_body_unstored"} <= set(unstored["flags"])
    assert unstored["request_body"] is None and unstored["response_hash"] is None
    assert unstored["request_hash"] != "" and unstored["cost_usd"] != "0"  # metered, booked
    assert records[2]["outcome"] == "proxy_error"
    assert json.loads(kept) == ask("Hello")


async def test_a_forwarded_request_is_stored_once_it_has_its_upstream_connection(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    # mitmproxy writes the request a few loop turns after the request hook, right after it gives
    # the flow its upstream connection (HttpStream.make_server_connection): storing the body
    # before that put the store on the request's way in. Without one (a flow killed first) it
    # is stored anyway, within proxy.flow.after_reply.MAX_TURNS turns.
    body = ask("Hello")
    async with addon_context(tmp_path / "run", **live_options(tmp_path, vendor)) as live:
        waiting, killed = live.flow(CHAT, body), live.flow(CHAT, body)
        for flow in (waiting, killed):
            for event in eventsequence.iterate(flow):
                await live.hook(event)
                if event.name == "request":
                    break
        assert waiting.response is None and killed.response is None  # both forwarded
        for _ in range(3):
            await asyncio.sleep(0)  # turns pass: neither has its connection yet
        assert waiting.metadata["harness"].request_body is None
        waiting.server_conn = tflow.tserver_conn()  # mitmproxy: the request is written now
        await asyncio.sleep(0)
        stored = waiting.metadata["harness"].request_body
        assert stored is not None
        assert json.loads(BodyStore(tmp_path / "run" / "bodies").get(stored)) == body
        for _ in range(MAX_TURNS):
            await asyncio.sleep(0)
        assert killed.metadata["harness"].request_body is not None


async def test_a_forwarded_call_is_covered_before_it_leaves_and_journaled_once_it_has(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    # The durable block a call draws from is written before its request can go out; the call's
    # own line only once mitmproxy has given it its upstream connection, off its way in.
    async with addon_context(tmp_path / "run", **live_options(tmp_path, vendor)) as live:
        flow = live.flow(CHAT, ask("Hello"))
        for event in eventsequence.iterate(flow):
            await live.hook(event)
            if event.name == "request":
                break
        assert flow.response is None  # forwarded
        journal = read_journal(tmp_path / "run")
        seq = flow.metadata["harness"].seq
        assert sum(e.usd for e in journal if isinstance(e, JournalBlock)) >= (
            flow.metadata["harness"].reserved
        )
        assert not [e for e in journal if isinstance(e, JournalCall)]
        flow.server_conn = tflow.tserver_conn()  # mitmproxy: the request is written now
        await asyncio.sleep(0)
        calls = [e for e in read_journal(tmp_path / "run") if isinstance(e, JournalCall)]
        assert [(c.seq, c.reserved_usd) for c in calls] == [
            (seq, flow.metadata["harness"].reserved)
        ]


async def test_a_journal_line_that_cannot_be_written_stops_the_proxy_forwarding(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    # Only the journal's disk fills up, after its first block: the next call still draws from
    # that durable block and goes out, its line then fails, and no call is forwarded after it.
    run = tmp_path / "run"
    run.mkdir()
    vendor.reset()
    with mounted_tmpfs(tmp_path / "journal-disk") as disk:
        journal = disk / "reservations.jsonl"
        (run / "reservations.jsonl").symlink_to(journal)
        async with addon_context(run, **live_options(tmp_path, vendor)) as live:
            first, _, _ = await live.call(CHAT, ask("Hello"))
            # The journal's last page full too (a tmpfs file grows by pages): a zero block
            # padded to the page's end, then the disk filled.
            with journal.open("a") as f:
                pad = -(journal.stat().st_size + 1) % PAGE
                zero = '{"schema":1,"kind":"block","usd":"0"}'
                assert pad >= len(zero)
                f.write(zero + " " * (pad - len(zero)) + "\n")
            fill(disk)
            second, _, _ = await live.call(CHAT, ask("Hello there"))
            later, refused, _ = await live.call(CHAT, ask("Hello again"))
            forwarded = len(vendor.requests)
            records = live.calls()
        spent = recover_spend(run)
    assert first == 200
    assert later == 503 and "reservation journal" in refused["error"]["message"]
    assert forwarded == 2  # nothing was forwarded once the line had failed
    # The second call went out on a durable block; its reply is served, logged and booked (the
    # call log still works), and a crash now would charge the block's rest too.
    assert second == 200 and records[1]["status"] == 200 and records[1]["cost_usd"] != "0"
    assert spent.logged_usd + spent.unlogged_usd > 0


async def test_a_rewritten_body_goes_out_with_its_own_length_and_the_study_key(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    # A stream that did not ask for usage is rewritten to ask for it: the forwarded request
    # carries the new body, its length, and the study's key instead of the arm's.
    arm_headers = {"authorization": "Bearer arm-key", "x-harness-purpose": "main"}
    async with addon_context(tmp_path / "live", **live_options(tmp_path, vendor)) as live:
        status, _, flow = await live.call(CHAT, ask("Hi", stream=True), headers=arm_headers)
    assert status == 200, flow.response.content
    req = flow.request
    sent = json.loads(req.raw_content)
    assert sent["stream_options"] == {"include_usage": True}
    assert req.headers.get_all("content-length") == [str(len(req.raw_content))]
    assert req.headers.get_all("authorization") == [f"Bearer {STUDY_KEYS['OPENAI_API_KEY']}"]
    assert "x-harness-purpose" not in req.headers
