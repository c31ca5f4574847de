"""Exact prices end to end: the booked cost of a call equals the figure worked out by hand.

Each test makes a call with known token counts (cache writes of both lifetimes, cache reads,
reasoning, a long-context tier), then works out the price by hand from those counts and the
per-million rates written here as literals -- deliberately not through `ledger.prices.cost`, so
a wrong rule there cannot hide behind itself -- and checks the call log's `cost_usd` and the
ledger's settlement both equal it exactly (Decimal arithmetic; no rounding anywhere).

The rates below are the packaged price table's (`ledger/prices.toml`); if that table changes,
these literals must be changed by hand too, which is the point.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import STUDY_KEYS, start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

MILLION = Decimal(1_000_000)
CENT_MILLIONTH = Decimal("0.00000001")
PROMPT = "Summarise the document above in one line."
USER: list[MessageParam] = [{"role": "user", "content": PROMPT}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": PROMPT}]


def usd(*terms: tuple[int, str]) -> Decimal:
    """Sum of tokens x USD-per-million-tokens, exactly."""
    return sum((Decimal(tokens) * Decimal(rate) for tokens, rate in terms), Decimal(0)) / MILLION


# -- a vendor that reports cache reads -------------------------------------------------------
# The fake vendor keeps no cache, so it never reports a cache read; this canned upstream answers
# with fixed usage the way the vendors report a warm cache. (Its usage is larger than the short
# request could produce, so the proxy flags `over_reservation` -- and still books it in full.)

CANNED_ANTHROPIC = {
    "id": "msg_canned",
    "type": "message",
    "role": "assistant",
    "model": "claude-opus-4-6",
    "content": [{"type": "text", "text": "A short summary."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 1234,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 50000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1500, "ephemeral_1h_input_tokens": 500},
        "output_tokens": 321,
    },
}
CANNED_OPENAI = {
    "id": "chatcmpl-canned",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-5-2025-08-07",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "A short summary."},
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 60000,
        "completion_tokens": 900,
        "total_tokens": 60900,
        "prompt_tokens_details": {"cached_tokens": 40000},
        "completion_tokens_details": {"reasoning_tokens": 700},
    },
}


# The same three figures worked out on paper:
#   opus-4-6: 1234 x 5 + 1500 x 6.25 + 500 x 10 + 50000 x 0.50 + 321 x 25 = 53570 micro-USD
#   gpt-5:   20000 x 1.25 + 40000 x 0.125 + 900 x 10                     = 39000
#   gpt-4.1: 2000 x 2 + 8000 x 0.50 + 50 x 8                             =  8400
OPUS_CANNED_USD = Decimal("0.05357")
GPT5_CANNED_USD = Decimal("0.039")
GPT41_STREAM_USD = Decimal("0.0084")


def _sse_chat_stream() -> bytes:
    base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1"}
    chunks = [
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": "Short."},
                    "finish_reason": None,
                }
            ],
        },
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            **base,
            "choices": [],
            "usage": {
                "prompt_tokens": 10000,
                "completion_tokens": 50,
                "total_tokens": 10050,
                "prompt_tokens_details": {"cached_tokens": 8000},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        },
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


class _Canned(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.path.endswith("/messages"):
            payload, ctype = json.dumps(CANNED_ANTHROPIC).encode(), "application/json"
        elif body.get("stream"):
            payload, ctype = _sse_chat_stream(), "text/event-stream"
        else:
            payload, ctype = json.dumps(CANNED_OPENAI).encode(), "application/json"
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def canned_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# -- proxies -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake_proxy(
    vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyProcess]:
    # A long-context call reserves its worst case (every prompt byte a token at the dearest
    # tier rate: about $11 for 900k characters), so the cap leaves room for it.
    proxy = start_live_proxy(tmp_path_factory.mktemp("prices"), vendor, cap="100")
    yield proxy
    proxy.stop()


@pytest.fixture(scope="module")
def canned_proxy(
    canned_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyProcess]:
    tmp = tmp_path_factory.mktemp("prices_canned")
    args = [
        "--mode",
        "live",
        "--cap",
        "10",
        "--ledger",
        str(tmp / "ledger.jsonl"),
        "--upstream",
        f"anthropic={canned_url}",
        "--upstream",
        f"openai={canned_url}",
    ]
    proxy = ProxyProcess(tmp / "run", *args, env=STUDY_KEYS)
    yield proxy
    proxy.stop()


def _booked(proxy: ProxyProcess, count_before: int) -> dict[str, Any]:
    """The call log record of the call just made (the one after `count_before` records)."""
    return proxy.calls(at_least=count_before + 1, timeout=15)[count_before]


def _ledger_settlement(proxy: ProxyProcess, seq: int) -> Decimal:
    """The call's settlement as the ledger booked it (the writer batches every ~20 ms)."""
    ledger = proxy.run_dir.parent / "ledger.jsonl"
    deadline = time.monotonic() + 10
    while True:
        for line in ledger.read_text().splitlines():
            entry = json.loads(line)
            if entry["kind"] != "calls_settled":
                continue
            for call in entry["fields"]["calls"]:
                if call["run_id"] == proxy.run_dir.name and call["seq"] == seq:
                    return Decimal(call["cost_usd"])
        if time.monotonic() > deadline:
            raise AssertionError(f"call {seq} has no settlement in {ledger}")
        time.sleep(0.05)


def _assert_booked(proxy: ProxyProcess, record: dict[str, Any], by_hand: Decimal) -> None:
    booked = Decimal(record["cost_usd"])
    assert booked == by_hand, f"booked {booked}, by hand {by_hand}"
    assert booked.quantize(CENT_MILLIONTH) == by_hand.quantize(CENT_MILLIONTH)
    assert _ledger_settlement(proxy, int(record["seq"])) == by_hand
    assert record["tokens"]["source"] == "vendor"


# -- cache writes (fake vendor) -----------------------------------------------------------------

DOC_5M = "The keeper climbed the tower each night to light the lamp. " * 200
DOC_1H = "Ships passed the rocks safely because the light never failed. " * 100


def test_cache_writes_of_both_lifetimes_at_their_own_rates(
    fake_proxy: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    before = len(fake_proxy.calls())
    reply = fake_proxy.anthropic().messages.create(
        model="claude-haiku-4-5-20251001",
        max_tokens=200,
        messages=USER,
        system=[
            {"type": "text", "text": DOC_1H, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
            {"type": "text", "text": DOC_5M, "cache_control": {"type": "ephemeral", "ttl": "5m"}},
        ],
    )
    usage = reply.usage
    assert usage.cache_creation is not None
    writes_5m = usage.cache_creation.ephemeral_5m_input_tokens
    writes_1h = usage.cache_creation.ephemeral_1h_input_tokens
    assert writes_5m > 0 and writes_1h > 0 and usage.input_tokens > 0
    assert usage.cache_creation_input_tokens == writes_5m + writes_1h
    (served,) = vendor.served
    assert served.input_tokens == usage.input_tokens
    assert served.cache_write_tokens == writes_5m + writes_1h
    # claude-haiku-4-5: input $1, 5-minute write $1.25, 1-hour write $2, output $5 per million.
    by_hand = usd(
        (usage.input_tokens, "1.00"),
        (writes_5m, "1.25"),
        (writes_1h, "2.00"),
        (usage.output_tokens, "5.00"),
    )
    record = _booked(fake_proxy, before)
    assert record["tokens"]["cache_write"] == writes_5m + writes_1h
    assert record["tokens"]["cache_write_1h"] == writes_1h
    _assert_booked(fake_proxy, record, by_hand)


def test_streamed_thinking_with_a_cache_write(fake_proxy: ProxyProcess, vendor: FakeVendor) -> None:
    vendor.reset()
    before = len(fake_proxy.calls())
    with fake_proxy.anthropic().messages.stream(
        model="claude-haiku-4-5-20251001",
        max_tokens=3000,
        messages=USER,
        thinking={"type": "enabled", "budget_tokens": 1024},
        system=[{"type": "text", "text": DOC_5M, "cache_control": {"type": "ephemeral"}}],
    ) as stream:
        final = stream.get_final_message()
    usage = final.usage
    assert any(block.type == "thinking" for block in final.content)
    writes = usage.cache_creation_input_tokens or 0
    assert writes > 0
    # Thinking is billed inside output_tokens, at the output rate, once.
    by_hand = usd((usage.input_tokens, "1.00"), (writes, "1.25"), (usage.output_tokens, "5.00"))
    _assert_booked(fake_proxy, _booked(fake_proxy, before), by_hand)


# -- reasoning (fake vendor) --------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_reasoning_tokens_are_output_priced_once(
    fake_proxy: ProxyProcess, vendor: FakeVendor, stream: bool
) -> None:
    vendor.reset()
    before = len(fake_proxy.calls())
    client = fake_proxy.openai()
    if stream:
        chunks = list(
            client.chat.completions.create(
                model="gpt-5",
                messages=CHAT,
                reasoning_effort="high",
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        usage = chunks[-1].usage
    else:
        usage = client.chat.completions.create(
            model="gpt-5",
            messages=CHAT,
            reasoning_effort="high",
        ).usage
    assert usage is not None and usage.completion_tokens_details is not None
    reasoning = usage.completion_tokens_details.reasoning_tokens or 0
    assert 0 < reasoning < usage.completion_tokens
    # gpt-5: input $1.25, output $10 per million; completion_tokens already holds the reasoning.
    by_hand = usd((usage.prompt_tokens, "1.25"), (usage.completion_tokens, "10.00"))
    record = _booked(fake_proxy, before)
    assert record["tokens"]["reasoning"] == reasoning
    assert record["tokens"]["output"] == usage.completion_tokens
    _assert_booked(fake_proxy, record, by_hand)


# -- the long-context tier (fake vendor) --------------------------------------------------------


def test_long_context_tier_prices_every_token_at_the_tier_rates(
    fake_proxy: ProxyProcess, vendor: FakeVendor
) -> None:
    """Above 200k prompt tokens, claude-sonnet-4-6 pays its tier's rates on ALL tokens, output
    and cache writes included. The fake counts about 4 characters a token."""
    vendor.reset()
    before = len(fake_proxy.calls())
    cached = "Lighthouse logbook entry: calm seas, lamp lit at dusk. " * 8000  # ~440k chars
    rest = "Storm logbook entry: high seas, lamp kept burning all night. " * 7500  # ~460k chars
    reply = fake_proxy.anthropic(timeout=60).messages.create(
        model="claude-sonnet-4-6",
        max_tokens=200,
        system=[{"type": "text", "text": cached, "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": rest}],
    )
    usage = reply.usage
    writes = usage.cache_creation_input_tokens or 0
    prompt = usage.input_tokens + writes + (usage.cache_read_input_tokens or 0)
    assert prompt > 200_000 and writes > 0
    # claude-sonnet-4-6 above 200k: input $6, 5-minute write $7.50, output $22.50 per million.
    by_hand = usd((usage.input_tokens, "6.00"), (writes, "7.50"), (usage.output_tokens, "22.50"))
    # The base rates ($3, $3.75, $15) would book far less: the tier was applied.
    base = usd((usage.input_tokens, "3.00"), (writes, "3.75"), (usage.output_tokens, "15.00"))
    assert by_hand > base
    _assert_booked(fake_proxy, _booked(fake_proxy, before), by_hand)


# -- cache reads (canned upstream) --------------------------------------------------------------


def test_anthropic_cache_reads_and_writes_each_at_their_own_rate(
    canned_proxy: ProxyProcess,
) -> None:
    before = len(canned_proxy.calls())
    reply = canned_proxy.anthropic().messages.create(
        model="claude-opus-4-6",
        max_tokens=500,
        messages=USER,
    )
    assert reply.usage.cache_read_input_tokens == 50000
    # claude-opus-4-6, prompt under its 200k tier: input $5, 5-minute write $6.25, 1-hour write
    # $10, cache read $0.50, output $25 per million.
    by_hand = usd((1234, "5.00"), (1500, "6.25"), (500, "10.00"), (50000, "0.50"), (321, "25.00"))
    assert by_hand == OPUS_CANNED_USD
    record = _booked(canned_proxy, before)
    assert record["tokens"]["cache_read"] == 50000 and record["tokens"]["input"] == 1234
    _assert_booked(canned_proxy, record, by_hand)


def test_openai_cached_prompt_tokens_are_not_counted_twice(canned_proxy: ProxyProcess) -> None:
    before = len(canned_proxy.calls())
    reply = canned_proxy.openai().chat.completions.create(
        model="gpt-5",
        messages=CHAT,
    )
    assert reply.usage is not None and reply.usage.prompt_tokens == 60000
    # gpt-5: 20000 uncached prompt tokens at $1.25, 40000 cached at $0.125, 900 output (700
    # of them reasoning) at $10.
    by_hand = usd((20000, "1.25"), (40000, "0.125"), (900, "10.00"))
    assert by_hand == GPT5_CANNED_USD
    record = _booked(canned_proxy, before)
    assert record["tokens"]["input"] == 20000 and record["tokens"]["cache_read"] == 40000
    assert record["tokens"]["reasoning"] == 700
    _assert_booked(canned_proxy, record, by_hand)


def test_openai_stream_usage_with_cached_tokens(canned_proxy: ProxyProcess) -> None:
    before = len(canned_proxy.calls())
    chunks = list(
        canned_proxy.openai().chat.completions.create(
            model="gpt-4.1",
            messages=CHAT,
            stream=True,
        )
    )
    assert all(chunk.choices for chunk in chunks)  # the usage chunk stayed with the proxy
    # gpt-4.1: 2000 uncached at $2, 8000 cached at $0.50, 50 output at $8.
    by_hand = usd((2000, "2.00"), (8000, "0.50"), (50, "8.00"))
    assert by_hand == GPT41_STREAM_USD
    _assert_booked(canned_proxy, _booked(canned_proxy, before), by_hand)


def test_run_total_in_the_ledger_is_the_sum_of_the_hand_figures(
    canned_proxy: ProxyProcess,
) -> None:
    """The run settles at exactly the sum of the canned calls' hand figures."""
    by_model = {
        "claude-opus-4-6": OPUS_CANNED_USD,
        "gpt-5": GPT5_CANNED_USD,
        "gpt-4.1": GPT41_STREAM_USD,
    }
    records = canned_proxy.calls()
    assert records
    assert canned_proxy.stop() == 0
    ledger = canned_proxy.run_dir.parent / "ledger.jsonl"
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    (settled,) = [e for e in entries if e["kind"] == "run_settled"]
    expected = sum((by_model[r["model_requested"]] for r in records), Decimal(0))
    assert Decimal(settled["fields"]["total_usd"]) == expected
