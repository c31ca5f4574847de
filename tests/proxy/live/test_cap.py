"""200 calls racing for the last dollar: the run's cap holds at every moment, refused calls get
each vendor's "out of credit" error, and every reservation ends released and booked.

The fake vendor holds every reply back (`first_byte_delay`) until the whole burst has been
admitted or refused, so the cap, not the order in which calls happen to finish, decides how many
get through: exactly the calls whose worst case still fits, in the order the proxy numbered them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from ledger.prices import load_prices, worst_case
from proxy.live.forwarder import input_bound, max_output
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import harness
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

CALLS = 200
HOLD_S = 4.0  # how long the fake holds every reply: longer than the burst takes to arrive
HAIKU = "claude-haiku-4-5-20251001"
MINI = "gpt-4.1-mini"
ANTHROPIC_MAX_TOKENS = 1000
OPENAI_MAX_TOKENS = 3000
PROMPT = "Name one lighthouse, please."
USER: list[MessageParam] = [{"role": "user", "content": PROMPT}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": PROMPT}]
HOLD = {"x-fake-behaviour": f"first_byte_delay={HOLD_S}"}


def _worst(model: str, route: str, body: dict[str, Any]) -> Decimal:
    """The proxy's worst case for a body as the SDK sends it (compact JSON is the shortest the
    SDK could send, so the bound on the wire is at least this)."""
    price = load_prices().model(model)
    raw_len = len(json.dumps(body))
    return worst_case(price, input_bound(route, body, raw_len), max_output(route, body, price))


ANTHROPIC_BODY = {"model": HAIKU, "max_tokens": ANTHROPIC_MAX_TOKENS, "messages": USER}
OPENAI_BODY = {"model": MINI, "max_tokens": OPENAI_MAX_TOKENS, "messages": CHAT}
WORST = max(
    _worst(HAIKU, "anthropic.messages", ANTHROPIC_BODY), _worst(MINI, "openai.chat", OPENAI_BODY)
)
# Room for about 45% of the burst's worst cases.
CAP = (WORST * CALLS * Decimal("0.45")).quantize(Decimal("0.000001"))


@dataclass
class Burst:
    proxy: ProxyProcess
    vendor: FakeVendor
    ledger: Path
    results: list[object]  # per call: the reply, or the exception the SDK raised
    calls: list[dict[str, Any]]  # the call log after the proxy stopped
    journal: list[dict[str, Any]]


async def _burst(proxy: ProxyProcess) -> list[object]:
    async with proxy.async_anthropic(timeout=60) as ant, proxy.async_openai(timeout=60) as oai:

        async def one(i: int) -> object:
            if i % 2 == 0:
                return await ant.messages.create(
                    model=HAIKU,
                    max_tokens=ANTHROPIC_MAX_TOKENS,
                    messages=USER,
                    extra_headers=HOLD,
                )
            return await oai.chat.completions.create(
                model=MINI,
                max_tokens=OPENAI_MAX_TOKENS,
                messages=CHAT,
                extra_headers=HOLD,
            )

        return await asyncio.gather(*(one(i) for i in range(CALLS)), return_exceptions=True)


@pytest.fixture(scope="module")
def burst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Burst]:
    tmp = tmp_path_factory.mktemp("cap")
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp, vendor, cap=str(CAP), deadline=60)
        try:
            results = asyncio.run(_burst(proxy))
        finally:
            assert proxy.stop() == 0
        log_lines = (proxy.run_dir / "calls.jsonl").read_text().splitlines()
        calls = [json.loads(line) for line in log_lines]
        journal = [
            entry
            for line in (proxy.run_dir / "reservations.jsonl").read_text().splitlines()
            if "seq" in (entry := json.loads(line))  # a call's line, not a block's
        ]
        yield Burst(proxy, vendor, tmp / "ledger.jsonl", results, calls, journal)


def _ledger_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_cap_admits_only_some_calls_and_refuses_the_rest_with_the_vendors_error(
    burst: Burst,
) -> None:
    admitted = [r for r in burst.results if not isinstance(r, BaseException)]
    refused = [r for r in burst.results if isinstance(r, BaseException)]
    assert 0.3 * CALLS <= len(admitted) <= 0.6 * CALLS, (len(admitted), CAP, WORST)
    for i, result in enumerate(burst.results):
        if not isinstance(result, BaseException):
            continue
        if i % 2 == 0:
            assert isinstance(result, anthropic.PaymentRequiredError), repr(result)
            assert result.status_code == 402
            assert isinstance(result.body, dict)
            assert result.body["error"]["type"] == "billing_error"
        else:
            assert isinstance(result, openai.RateLimitError), repr(result)
            assert result.status_code == 429 and result.code == "insufficient_quota"
        assert "cap" in result.message.lower()
    # Every admitted call went to the vendor once; no refused call did.
    assert len(burst.vendor.requests) == len(admitted)
    assert len(refused) == CALLS - len(admitted)
    outcomes = [c["outcome"] for c in burst.calls]
    assert outcomes.count("ok") == len(admitted) and outcomes.count("refused") == len(refused)
    assert all("over_cap" in c["flags"] for c in burst.calls if c["outcome"] == "refused")


def test_booked_spend_never_passes_the_cap(burst: Burst) -> None:
    logged = sum((Decimal(c["cost_usd"]) for c in burst.calls), Decimal(0))
    assert 0 < logged <= CAP
    entries = _ledger_entries(burst.ledger)
    running = Decimal(0)
    for entry in entries:  # cumulatively, entry by entry: never over the cap
        if entry["kind"] == "calls_settled":
            running += sum(Decimal(c["cost_usd"]) for c in entry["fields"]["calls"])
            assert running <= CAP
    assert running == logged
    (settled,) = [e for e in entries if e["kind"] == "run_settled"]
    assert Decimal(settled["fields"]["total_usd"]) == logged <= CAP


def test_spend_plus_open_reservations_never_pass_the_cap(burst: Burst) -> None:
    """At every moment: what was spent plus what was held stays within the cap.

    The proxy numbers calls (seq) and reserves in the same step, so reservations happen in seq
    order; a reservation opens no earlier than the call's arrival (call log timing.start) and is
    released no later than its settlement reached the ledger (calls_settled entry time). Holding
    each reservation over that whole window over-states what was open at any time; even so, the
    total stays within the cap.
    """
    reserved = {int(j["seq"]): Decimal(j["reserved_usd"]) for j in burst.journal}
    by_seq = {int(c["seq"]): c for c in burst.calls}
    settled_at: dict[int, float] = {}
    for entry in _ledger_entries(burst.ledger):
        if entry["kind"] == "calls_settled":
            when = datetime.fromisoformat(entry["time"]).timestamp()
            for c in entry["fields"]["calls"]:
                settled_at.setdefault(int(c["seq"]), when)
    assert set(reserved) <= set(settled_at)
    events = sorted({by_seq[seq]["timing"]["start"] for seq in reserved})
    peak = Decimal(0)
    for t in events:
        held = Decimal(0)
        for seq, amount in reserved.items():
            opened = by_seq[seq]["timing"]["start"] <= t
            if opened and t < settled_at[seq]:
                held += amount
            elif opened:
                held += Decimal(by_seq[seq]["cost_usd"])
        peak = max(peak, held)
        assert held <= CAP, f"at {t}: spend + reservations {held} > cap {CAP}"
    # The burst really raced for the cap: at its peak, almost all of it was held.
    assert peak > CAP - WORST


def test_refusals_happen_only_when_the_worst_case_does_not_fit(burst: Burst) -> None:
    """In seq order (the proxy's reservation order), each call is admitted iff its worst case
    fits beside the reservations already held: none shrunk to fit, none refused with room left.
    Valid because no reply was released before the whole burst was decided."""
    starts = [c["timing"]["start"] for c in burst.calls]
    first_reply = min(s.first_byte for s in burst.vendor.served if s.first_byte is not None)
    first_request = min(r.monotonic for r in burst.vendor.requests)
    # Every call arrived at the proxy before the fake let the first reply go.
    wall_of_first_reply = first_reply - first_request + min(r.time for r in burst.vendor.requests)
    assert max(starts) < wall_of_first_reply, "the burst outlasted the hold: raise HOLD_S"
    reserved = {int(j["seq"]): Decimal(j["reserved_usd"]) for j in burst.journal}
    # Same body, same worst case: what the proxy held for one admitted call of each route.
    per_route = {j["route"]: Decimal(j["reserved_usd"]) for j in burst.journal}
    assert set(per_route) == {"anthropic.messages", "openai.chat"}
    held = Decimal(0)
    for call in sorted(burst.calls, key=lambda c: int(c["seq"])):
        seq = int(call["seq"])
        worst = per_route[call["route"]]
        if call["outcome"] == "refused":
            assert held + worst > CAP, f"call {seq} refused with {CAP - held} left of the cap"
        else:
            assert reserved[seq] == worst  # never shrunk to what was left
            held += worst
            assert held <= CAP
    assert held == sum(reserved.values())


def test_every_reservation_ends_released_and_the_run_is_settled(burst: Burst) -> None:
    logged = {int(c["seq"]) for c in burst.calls}
    journal_seqs = [int(j["seq"]) for j in burst.journal]
    assert len(journal_seqs) == len(set(journal_seqs))
    assert set(journal_seqs) <= logged  # every reservation reached the call log
    assert len(journal_seqs) == sum(1 for c in burst.calls if c["outcome"] == "ok")
    entries = _ledger_entries(burst.ledger)
    (settled,) = [e for e in entries if e["kind"] == "run_settled"]
    assert settled["fields"]["run_id"] == burst.proxy.run_dir.name
    assert settled["fields"]["in_flight"] == 0
    settlements = [c for e in entries if e["kind"] == "calls_settled" for c in e["fields"]["calls"]]
    assert {int(c["seq"]) for c in settlements} == set(journal_seqs)
    verify = harness("ledger", "verify", "--ledger", str(burst.ledger))
    assert verify.returncode == 0, verify.stderr
