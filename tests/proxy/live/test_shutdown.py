"""A proxy stopped with calls in flight settles each at its reservation and closes the run."""

from __future__ import annotations

import json
import threading
import time
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import harness
from tests.proxy.live_helpers import start_live_proxy

pytestmark = pytest.mark.integration

USER = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]


def _journaled_calls(journal: Path) -> list[int]:
    lines = [json.loads(x) for x in journal.read_text().splitlines() if x.endswith("}")]
    return [e["seq"] for e in lines if e["kind"] == "call"]


def test_shutdown_settles_calls_in_flight_at_their_reservation(tmp_path: Path) -> None:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path, vendor)
        proxy.openai().chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
        errors: list[BaseException] = []

        def stalled_stream() -> None:
            try:
                with httpx.stream(
                    "POST",
                    f"{proxy.openai_base}/chat/completions",
                    json={
                        "model": "gpt-4.1-mini",
                        "messages": USER,
                        "stream": True,
                        "max_tokens": 500,
                    },
                    headers={"x-fake-behaviour": "stall_after=3"},
                    timeout=30,
                ) as response:
                    for _ in response.iter_raw():
                        pass
            except httpx.HTTPError as e:
                errors.append(e)

        thread = threading.Thread(target=stalled_stream)
        thread.start()
        vendor.wait_for_requests(2, timeout=10)
        journal = proxy.run_dir / "reservations.jsonl"
        # A call's journal line is written just after mitmproxy has sent it upstream (its durable
        # block was drawn before), so the vendor can hold the request a moment before the line
        # is there: seen once on a loaded machine. The shutdown must come after both lines.
        deadline = time.monotonic() + 10
        while _journaled_calls(journal) != [1, 2] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _journaled_calls(journal) == [1, 2]
        assert proxy.stop() == 0
        thread.join(10)
    assert errors, "the stalled stream should have been broken by the shutdown"
    calls = {
        c["seq"]: c
        for c in (json.loads(x) for x in (proxy.run_dir / "calls.jsonl").read_text().splitlines())
    }
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    reservations = {r["seq"]: Decimal(r["reserved_usd"]) for r in lines if r["kind"] == "call"}
    # The durable blocks cover every reservation drawn from them.
    blocks = sum(Decimal(r["usd"]) for r in lines if r["kind"] == "block")
    assert blocks >= sum(reservations.values())
    assert set(calls) == set(reservations)  # every reservation ended in a logged settlement
    stalled = next(c for c in calls.values() if c["stream"] or c["outcome"] != "ok")
    assert stalled["outcome"] == "shutdown"
    assert "billed_at_reservation" in stalled["flags"]
    assert Decimal(stalled["cost_usd"]) == reservations[stalled["seq"]]
    ledger = tmp_path / "ledger.jsonl"
    assert harness("ledger", "verify", "--ledger", str(ledger)).returncode == 0
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert entries[-1]["kind"] == "run_settled"
    total = Decimal(entries[-1]["fields"]["total_usd"])
    assert total == sum(Decimal(c["cost_usd"]) for c in calls.values())
