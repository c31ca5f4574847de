"""The pricing rules of live calls: worst-case bounds and the cut-call rule."""

from __future__ import annotations

import json

from ledger.prices import load_prices
from proxy.metering.billing import billable, input_bound, max_output
from proxy.metering.tokencount import count_request_input
from proxy.metering.usage import MeteredUsage

PRICES = load_prices()
BODY = {
    "model": "gpt-4.1-mini",
    "messages": [{"role": "user", "content": "naïve café, 東京 and emoji 🙂 " * 50}],
}


def test_input_bound_is_never_below_the_proxys_own_count() -> None:
    raw = json.dumps(BODY).encode()
    assert input_bound("openai.chat", BODY, len(raw)) >= count_request_input(
        "openai.chat", "gpt-4.1-mini", BODY
    )
    with_tools = {**BODY, "tools": [{"type": "function", "function": {"name": "f"}}]}
    assert input_bound("openai.chat", with_tools, len(raw)) > input_bound(
        "openai.chat", BODY, len(raw)
    )


def test_max_output_takes_the_request_limit_times_n_and_never_exceeds_the_model() -> None:
    price = PRICES.model("gpt-4.1-mini")
    assert max_output("openai.chat", {"max_tokens": 100}, price) == 100
    assert max_output("openai.chat", {"max_completion_tokens": 100, "n": 3}, price) == 300
    assert max_output("openai.chat", {}, price) == price.max_output_tokens
    assert max_output("openai.chat", {"max_tokens": 10**9}, price) == price.max_output_tokens
    assert max_output("openai.embeddings", {}, PRICES.model("text-embedding-3-small")) == 0


def test_vendor_errors_are_free_but_unknowable_outcomes_charge_the_reservation() -> None:
    args = ("openai", "openai.chat", "gpt-4.1-mini", BODY)
    tokens, source = billable(*args, 429, None, None)
    assert tokens is not None and tokens.input == tokens.output == 0 and source == "vendor"
    assert billable(*args, 0, None, "deadline") == (None, "reservation")


def test_a_cut_stream_bills_input_and_the_counted_output() -> None:
    cut = MeteredUsage(
        input=None, output=42, source="proxy_count", complete=False, terminal_seen=False
    )
    tokens, source = billable(
        "openai", "openai.chat", "gpt-4.1-mini", BODY, 200, cut, "upstream_cut"
    )
    assert tokens is not None and source == "proxy_count"
    assert tokens.output == 42
    assert tokens.input == count_request_input("openai.chat", "gpt-4.1-mini", BODY)
    partial = MeteredUsage(input=7, output=3, source="partial", complete=False, terminal_seen=False)
    tokens, source = billable(
        "anthropic",
        "anthropic.messages",
        "claude-haiku-4-5",
        BODY,
        200,
        partial,
        "client_disconnect",
    )
    assert tokens is not None and (tokens.input, tokens.output, source) == (7, 3, "partial")


def test_a_cut_reasoning_model_charges_the_reservation() -> None:
    cut = MeteredUsage(
        input=None, output=5, source="proxy_count", complete=False, terminal_seen=False
    )
    assert billable("openai", "openai.chat", "gpt-5", BODY, 200, cut, "deadline") == (
        None,
        "reservation",
    )


def test_final_vendor_usage_wins_even_if_the_stream_was_then_cut() -> None:
    final = MeteredUsage(
        input=10,
        output=20,
        cache_read=5,
        reasoning=4,
        source="vendor",
        complete=False,
        terminal_seen=False,
    )
    tokens, source = billable("openai", "openai.chat", "gpt-5", BODY, 200, final, "upstream_cut")
    assert tokens is not None and source == "vendor"
    assert (tokens.input, tokens.output, tokens.cache_read, tokens.reasoning) == (10, 20, 5, 4)
