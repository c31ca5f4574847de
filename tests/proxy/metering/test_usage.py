"""proxy.metering.usage: vendor usage with no double counting, and a stream meter that relays the
vendor's
bytes unchanged (minus, when asked, exactly the usage chunk the proxy added) however the stream is
chunked, and that counts the output itself when a stream is cut or carries no usage.

Streams come from the project's own stubs (the vendors' exact formats) and, for what the stubs
never send (cache reads, usage on a choices chunk, errors after 200, cut streams), hand-written
vendor-shaped events. Each is fed re-split at random byte boundaries.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionChunk

from proxy.metering.tokencount import count_tokens
from proxy.metering.usage import MeteredUsage, StreamMeter, usage_from_body
from stubs.anthropic.messages import messages
from stubs.openai.chat import chat_completions
from stubs.openai.responses import responses
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from tests.stubs.sdk_transport import body_digest
from vendors.hosts import Vendor
from vendors.reply import VendorReply

CLAUDE = "claude-sonnet-4-6"
SPLITS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HANDLERS: dict[str, tuple[Vendor, Callable[[StubRequest, StubContext], VendorReply]]] = {
    "anthropic.messages": ("anthropic", messages),
    "openai.chat": ("openai", chat_completions),
    "openai.responses": ("openai", responses),
}


def stub(route: str, body: dict[str, Any]) -> VendorReply:
    vendor, handler = HANDLERS[route]
    # body_digest ignores the stream fields, so a streamed call and its plain twin get one answer.
    request = StubRequest(vendor=vendor, route=route, body=body, digest=body_digest(body))
    return handler(request, StubContext())


def resplit(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in pairwise(points) if b > a]


def meter(
    route: str, model: str, chunks: list[bytes], hide: bool = False
) -> tuple[bytes, MeteredUsage]:
    m = StreamMeter(route, model, hide_usage_chunk=hide)
    relayed = b"".join(m.feed(c) for c in chunks) + m.finish()
    return relayed, m.usage()


def sse(kind: str | None, data: dict[str, Any] | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {kind}\n" if kind else ""
    return f"{head}data: {payload}\n\n".encode()


cuts = st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=30)


# -- Anthropic ---------------------------------------------------------------------------------

CACHED_REQUEST = {
    "model": CLAUDE,
    "max_tokens": 2048,
    "stream": True,
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "system": [
        {
            "type": "text",
            "text": "You keep notes about the user. " * 40,
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        },
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Ana lives in Porto and likes trams. " * 30,
                    "cache_control": {"type": "ephemeral"},
                },
                {"type": "text", "text": "Where does Ana live?"},
            ],
        },
    ],
}


def anthropic_plain_twin(body: dict[str, Any]) -> MeteredUsage:
    plain = stub("anthropic.messages", {**body, "stream": False})
    usage = usage_from_body("anthropic.messages", plain.body)
    assert usage is not None
    return usage


@SPLITS
@given(cuts=cuts)
def test_anthropic_stub_stream_meters_exactly_what_the_plain_reply_says(cuts: list[int]) -> None:
    reply = stub("anthropic.messages", CACHED_REQUEST)
    data = reply.body
    relayed, usage = meter("anthropic.messages", CLAUDE, resplit(data, cuts))
    assert relayed == data
    expected = anthropic_plain_twin(CACHED_REQUEST)
    assert usage == MeteredUsage(
        **{**expected.__dict__, "counted_output_text": usage.counted_output_text}
    )
    # The stub's own harness figures: cache writes apart from input, start's output not added.
    assert usage.input == reply.usage.input_tokens
    assert usage.cache_write_5m > 0 and usage.cache_write_1h > 0
    assert usage.cache_write_5m + usage.cache_write_1h == reply.usage.cache_write_tokens
    assert usage.output == reply.usage.output_tokens
    assert 0 < usage.reasoning == reply.usage.reasoning_tokens <= usage.output
    assert usage.source == "vendor" and usage.complete and usage.terminal_seen


def anthropic_events(
    start_usage: dict[str, Any],
    texts: list[str],
    delta_usage: dict[str, Any] | None,
    stop: bool = True,
    thinking: str = "",
) -> list[bytes]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": CLAUDE,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        },
    }
    events = [sse("message_start", start), sse("ping", {"type": "ping"})]
    index = 0
    if thinking:
        events += [
            sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            ),
            sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": thinking},
                },
            ),
            sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl" * 20},
                },
            ),
            sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        index = 1
    events.append(
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        )
    )
    events += [
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": t},
            },
        )
        for t in texts
    ]
    events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    if delta_usage is not None:
        events.append(
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": delta_usage,
                },
            )
        )
    if stop:
        events.append(sse("message_stop", {"type": "message_stop"}))
    return events


START_USAGE = {
    "input_tokens": 12,
    "cache_creation_input_tokens": 300,
    "cache_read_input_tokens": 4000,
    "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
    "output_tokens": 1,
}
TEXTS = ["Ana lives ", "in Porto, ", "near the river."]


@SPLITS
@given(cuts=cuts)
def test_anthropic_cache_fields_and_cumulative_delta_are_not_double_counted(
    cuts: list[int],
) -> None:
    delta = {
        "output_tokens": 57,
        "output_tokens_details": {"thinking_tokens": 40},
        "input_tokens": 15,
        "cache_read_input_tokens": 4100,
        "cache_creation_input_tokens": None,
    }
    data = b"".join(anthropic_events(START_USAGE, TEXTS, delta, thinking="Porto is in Portugal."))
    relayed, usage = meter("anthropic.messages", CLAUDE, resplit(data, cuts))
    assert relayed == data
    # message_delta's input fields replace message_start's; a null one keeps the earlier value;
    # its cumulative output replaces (is not added to) message_start's 1.
    assert (usage.input, usage.cache_read, usage.cache_write_5m, usage.cache_write_1h) == (
        15,
        4100,
        100,
        200,
    )
    assert (usage.output, usage.reasoning) == (57, 40)
    assert usage.source == "vendor" and usage.complete


def test_anthropic_plain_body_with_every_cache_field() -> None:
    body = json.dumps(
        {
            "type": "message",
            "usage": {
                **START_USAGE,
                "output_tokens": 90,
                "output_tokens_details": {"thinking_tokens": 30},
            },
        }
    )
    usage = usage_from_body("anthropic.messages", body.encode())
    assert usage == MeteredUsage(
        input=12, output=90, cache_read=4000, cache_write_5m=100, cache_write_1h=200, reasoning=30
    )
    # No breakdown (older replies): every write is a 5-minute write.
    no_breakdown = json.dumps(
        {"usage": {"input_tokens": 1, "output_tokens": 2, "cache_creation_input_tokens": 50}}
    )
    usage = usage_from_body("anthropic.messages", no_breakdown.encode())
    assert usage is not None and (usage.cache_write_5m, usage.cache_write_1h) == (50, 0)


def test_anthropic_delta_restating_cache_writes_without_breakdown_prices_the_excess_high() -> None:
    delta = {"output_tokens": 5, "cache_creation_input_tokens": 350}
    _, usage = meter("anthropic.messages", CLAUDE, anthropic_events(START_USAGE, TEXTS, delta))
    assert (usage.cache_write_5m, usage.cache_write_1h) == (100, 250)


@SPLITS
@given(cuts=cuts)
def test_anthropic_error_event_after_200_is_recorded_and_output_counted(cuts: list[int]) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events = anthropic_events(START_USAGE, TEXTS, None, stop=False)
    data = b"".join(events[:-1]) + sse("error", error)  # no content_block_stop either
    relayed, usage = meter("anthropic.messages", CLAUDE, resplit(data, cuts))
    assert relayed == data
    assert usage.error_event == error
    assert usage.terminal_seen and not usage.complete
    assert usage.source == "partial"
    assert (usage.input, usage.cache_read, usage.cache_write_5m, usage.cache_write_1h) == (
        12,
        4000,
        100,
        200,
    )
    assert usage.counted_output_text == "".join(TEXTS)
    assert usage.output == count_tokens(CLAUDE, "".join(TEXTS)) > 1


@SPLITS
@given(cuts=cuts, data=st.data())
def test_anthropic_cut_stream_counts_the_output_it_delivered(
    cuts: list[int], data: st.DataObject
) -> None:
    full = stub("anthropic.messages", CACHED_REQUEST).body
    # Cut somewhere after the first text delta and before message_delta.
    first_text = full.index(b'"text_delta"')
    cut_at = data.draw(st.integers(first_text + 200, full.index(b"event: message_delta")))
    cut = full[:cut_at]
    relayed, usage = meter("anthropic.messages", CLAUDE, resplit(cut, cuts))
    assert relayed == cut
    assert not usage.terminal_seen and not usage.complete and usage.error_event is None
    assert usage.source == "partial"
    expected = anthropic_plain_twin(CACHED_REQUEST)
    assert (usage.input, usage.cache_write_5m, usage.cache_write_1h) == (
        expected.input,
        expected.cache_write_5m,
        expected.cache_write_1h,
    )
    assert usage.output == max(count_tokens(CLAUDE, usage.counted_output_text), 1)
    assert usage.output > 0 and usage.counted_output_text
    assert usage.reasoning <= usage.output


def test_anthropic_cut_right_after_message_start_bills_the_nominal_output_token() -> None:
    events = anthropic_events(START_USAGE, TEXTS, None, stop=False)
    _, usage = meter("anthropic.messages", CLAUDE, events[:1])
    assert (usage.input, usage.output, usage.source, usage.complete) == (12, 1, "partial", False)


def test_anthropic_final_usage_without_message_stop_is_the_vendors_but_not_complete() -> None:
    events = anthropic_events(START_USAGE, TEXTS, {"output_tokens": 9}, stop=False)
    _, usage = meter("anthropic.messages", CLAUDE, events)
    assert (usage.output, usage.source, usage.complete, usage.terminal_seen) == (
        9,
        "vendor",
        False,
        False,
    )


# -- OpenAI chat -------------------------------------------------------------------------------

CHAT_REQUEST = {
    "model": "gpt-5",
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [{"role": "user", "content": "Where does Ana live? Answer at length."}],
}


def usage_event(events: list[bytes]) -> bytes:
    (event,) = [e for e in events if b'"choices": []' in e or b'"choices":[]' in e]
    return event


@SPLITS
@given(cuts=cuts, hide=st.booleans())
def test_chat_stub_stream_usage_and_hidden_usage_chunk(cuts: list[int], hide: bool) -> None:
    reply = stub("openai.chat", CHAT_REQUEST)
    data = reply.body
    relayed, usage = meter("openai.chat", "gpt-5", resplit(data, cuts), hide=hide)
    assert relayed == (data.replace(usage_event(reply.chunks), b"") if hide else data)
    plain = usage_from_body(
        "openai.chat",
        stub(
            "openai.chat",
            {k: v for k, v in CHAT_REQUEST.items() if k not in ("stream", "stream_options")},
        ).body,
    )
    assert plain is not None
    assert usage == MeteredUsage(
        **{**plain.__dict__, "counted_output_text": usage.counted_output_text}
    )
    assert usage.input == reply.usage.input_tokens
    assert usage.output == reply.usage.output_tokens  # reasoning inside, not added
    assert 0 < usage.reasoning == reply.usage.reasoning_tokens < usage.output
    assert usage.complete and usage.terminal_seen
    if hide:  # what the arm's SDK parses has a choice in every chunk
        for line in relayed.split(b"\n"):
            if line.startswith(b"data: {"):
                assert ChatCompletionChunk.model_validate_json(line[6:]).choices


def test_hiding_never_delays_a_complete_event() -> None:
    reply = stub("openai.chat", CHAT_REQUEST)
    m = StreamMeter("openai.chat", "gpt-5", hide_usage_chunk=True)
    hidden = usage_event(reply.chunks)
    for event in reply.chunks:
        assert m.feed(event) == (b"" if event == hidden else event)
        assert m.feed(b"") == b""
    assert m.finish() == b""
    # Without hiding, every chunk comes straight back, partial events included.
    m = StreamMeter("openai.chat", "gpt-5")
    assert m.feed(reply.chunks[0][:7]) == reply.chunks[0][:7]


def test_chat_without_usage_is_counted_by_the_proxy() -> None:
    body = {**CHAT_REQUEST, "model": "gpt-4.1", "stream_options": None}
    del body["stream_options"]
    reply = stub("openai.chat", body)
    relayed, usage = meter("openai.chat", "gpt-4.1", reply.chunks, hide=True)
    assert relayed == reply.body
    assert usage.input is None and usage.source == "proxy_count"
    assert usage.terminal_seen and not usage.complete
    assert usage.output == count_tokens("gpt-4.1", usage.counted_output_text) > 0
    assert (
        usage.counted_output_text
        == json.loads(stub("openai.chat", {k: v for k, v in body.items() if k != "stream"}).body)[
            "choices"
        ][0]["message"]["content"]
    )


CHAT_USAGE = {
    "prompt_tokens": 5000,
    "completion_tokens": 700,
    "total_tokens": 5700,
    "prompt_tokens_details": {"cached_tokens": 3000, "cache_write_tokens": 1500, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 500, "audio_tokens": 0},
}
CHAT_EXPECTED = MeteredUsage(
    input=500, output=700, cache_read=3000, cache_write_5m=1500, reasoning=500
)


def chat_chunk(choices: list[dict[str, Any]], usage: Any = "absent") -> bytes:
    data: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-5",
        "choices": choices,
    }
    if usage != "absent":
        data["usage"] = usage
    return sse(None, data)


def choice(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {"index": 0, "delta": delta, "finish_reason": finish}


@SPLITS
@given(cuts=cuts, hide=st.booleans(), crlf=st.booleans())
def test_chat_usage_on_a_choices_chunk_is_read_and_never_hidden(
    cuts: list[int], hide: bool, crlf: bool
) -> None:
    events = [chat_chunk([choice(t)]) for t in TEXTS]
    events.append(chat_chunk([choice(None, "stop")], CHAT_USAGE))
    events.append(b"data: [DONE]\n\n")
    data = b"".join(events)
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    relayed, usage = meter("openai.chat", "gpt-5", resplit(data, cuts), hide=hide)
    assert relayed == data
    assert usage == MeteredUsage(
        **{**CHAT_EXPECTED.__dict__, "counted_output_text": "".join(TEXTS)}
    )


@SPLITS
@given(cuts=cuts, crlf=st.booleans())
def test_hidden_usage_chunk_is_removed_byte_exactly_with_any_line_ending(
    cuts: list[int], crlf: bool
) -> None:
    events = [chat_chunk([choice(t)], None) for t in TEXTS]
    events += [b": keep-alive\n\n", chat_chunk([], CHAT_USAGE), b"data: [DONE]\n\n"]
    if crlf:
        events = [e.replace(b"\n", b"\r\n") for e in events]
    data = b"".join(events)
    relayed, usage = meter("openai.chat", "gpt-5", resplit(data, cuts), hide=True)
    assert relayed == data.replace(events[-2], b"")
    assert usage.output == 700 and usage.complete


def test_running_usage_on_every_chunk_replaces_never_adds() -> None:
    running = [{**CHAT_USAGE, "completion_tokens": n} for n in (10, 20, 700)]
    events = [chat_chunk([choice(t)], u) for t, u in zip(TEXTS, running, strict=True)]
    _, usage = meter("openai.chat", "gpt-5", [*events, b"data: [DONE]\n"])
    assert usage.output == 700 and usage.input == 500
    assert usage.terminal_seen  # [DONE] without its empty line, seen at end of stream


def test_chat_cut_stream_and_in_stream_error() -> None:
    events = [chat_chunk([choice(t)], None) for t in TEXTS]
    data = b"".join(events)
    cut = data[: len(data) - 10]  # the last event is torn: its text was not delivered
    _, usage = meter("openai.chat", "gpt-5", [cut])
    assert usage.counted_output_text == "".join(TEXTS[:-1])
    assert (usage.input, usage.source, usage.complete, usage.terminal_seen) == (
        None,
        "proxy_count",
        False,
        False,
    )
    assert usage.output == count_tokens("gpt-5", "".join(TEXTS[:-1])) > 0
    error = {"error": {"message": "The server had an error", "type": "server_error"}}
    _, usage = meter("openai.chat", "gpt-5", [*events, sse(None, error)])
    assert usage.error_event == error and usage.terminal_seen and not usage.complete


def test_chat_and_embeddings_plain_bodies() -> None:
    assert usage_from_body("openai.chat", json.dumps({"usage": CHAT_USAGE}).encode()) == (
        CHAT_EXPECTED
    )
    body = json.dumps(
        {
            "object": "list",
            "data": [],
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 8, "total_tokens": 8},
        }
    )
    assert usage_from_body("openai.embeddings", body.encode()) == MeteredUsage(input=8, output=0)
    error = {"error": {"message": "bad", "type": "invalid_request_error"}}
    assert usage_from_body("openai.chat", json.dumps(error).encode()) is None
    assert usage_from_body("openai.chat", b"<html>502</html>") is None
    assert usage_from_body("cohere.rerank", b'{"usage": {}}') is None


# -- OpenAI Responses --------------------------------------------------------------------------

RESPONSES_REQUEST = {"model": "gpt-5-mini", "stream": True, "input": "Where does Ana live?"}


@SPLITS
@given(cuts=cuts)
def test_responses_stub_stream_matches_the_plain_reply(cuts: list[int]) -> None:
    reply = stub("openai.responses", RESPONSES_REQUEST)
    relayed, usage = meter("openai.responses", "gpt-5-mini", resplit(reply.body, cuts), hide=True)
    assert relayed == reply.body  # hiding is for chat only
    plain = usage_from_body(
        "openai.responses", stub("openai.responses", {**RESPONSES_REQUEST, "stream": False}).body
    )
    assert plain is not None
    assert usage == MeteredUsage(
        **{**plain.__dict__, "counted_output_text": usage.counted_output_text}
    )
    assert usage.output == reply.usage.output_tokens
    assert 0 < usage.reasoning == reply.usage.reasoning_tokens
    assert usage.complete and usage.counted_output_text


RESPONSES_USAGE = {
    "input_tokens": 9000,
    "output_tokens": 800,
    "total_tokens": 9800,
    "input_tokens_details": {
        "cached_tokens": 6000,
        "cache_write_tokens": 2000,
        "cache_write_tokens_details": {"ttl_30m_tokens": 1500, "ttl_12h_tokens": 500},
    },
    "output_tokens_details": {"reasoning_tokens": 600},
}


def responses_events(final: str | None, usage: dict[str, Any] | None) -> list[bytes]:
    events = [
        sse(
            "response.created",
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {"id": "r", "status": "in_progress", "usage": None},
            },
        )
    ]
    events += [
        sse(
            "response.reasoning_summary_text.delta",
            {
                "type": "response.reasoning_summary_text.delta",
                "delta": "Think. ",
                "item_id": "rs",
                "output_index": 0,
                "summary_index": 0,
                "sequence_number": 1,
            },
        )
    ]
    events += [
        sse(
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "delta": t,
                "item_id": "m",
                "output_index": 1,
                "content_index": 0,
                "sequence_number": 2 + i,
                "logprobs": [],
            },
        )
        for i, t in enumerate(TEXTS)
    ]
    if final:
        events.append(
            sse(
                final,
                {
                    "type": final,
                    "sequence_number": 9,
                    "response": {
                        "id": "r",
                        "status": final.split(".")[1],
                        "usage": usage,
                        "error": {"code": "server_error", "message": "boom"}
                        if final.endswith("failed")
                        else None,
                    },
                },
            )
        )
    return events


@pytest.mark.parametrize("final", ["response.completed", "response.incomplete"])
def test_responses_cache_and_reasoning_fields(final: str) -> None:
    _, usage = meter("openai.responses", "gpt-5", responses_events(final, RESPONSES_USAGE))
    assert usage == MeteredUsage(
        input=1000,
        output=800,
        cache_read=6000,
        cache_write_5m=1500,
        cache_write_1h=500,
        reasoning=600,
        counted_output_text="Think. " + "".join(TEXTS),
    )
    body = json.dumps({"object": "response", "usage": RESPONSES_USAGE}).encode()
    assert usage_from_body("openai.responses", body) == MeteredUsage(
        input=1000,
        output=800,
        cache_read=6000,
        cache_write_5m=1500,
        cache_write_1h=500,
        reasoning=600,
    )


def test_responses_failed_error_and_cut() -> None:
    _, failed = meter("openai.responses", "gpt-5", responses_events("response.failed", None))
    assert failed.terminal_seen and not failed.complete and failed.source == "proxy_count"
    assert failed.error_event == {
        "type": "response.failed",
        "error": {"code": "server_error", "message": "boom"},
    }
    error = {
        "type": "error",
        "code": "server_error",
        "message": "boom",
        "param": None,
        "sequence_number": 9,
    }
    _, errored = meter(
        "openai.responses", "gpt-5", [*responses_events(None, None), sse("error", error)]
    )
    assert errored.error_event == error and errored.terminal_seen
    _, cut = meter("openai.responses", "gpt-5", responses_events(None, None))
    assert (cut.input, cut.terminal_seen, cut.complete) == (None, False, False)
    assert cut.output == count_tokens("gpt-5", "Think. " + "".join(TEXTS)) > 0
    assert cut.reasoning == count_tokens("gpt-5", "Think. ") <= cut.output


def test_only_streamed_routes_get_a_meter() -> None:
    with pytest.raises(ValueError, match=r"openai\.embeddings"):
        StreamMeter("openai.embeddings", "text-embedding-3-small")


@SPLITS
@given(cuts=cuts)
def test_bare_cr_line_endings_still_frame_byte_exactly(cuts: list[int]) -> None:
    # A CR that ends a chunk may be half of a CRLF; the framer waits for the next byte to know.
    events = [chat_chunk([choice(t)], None).replace(b"\n", b"\r") for t in TEXTS]
    events += [chat_chunk([], CHAT_USAGE).replace(b"\n", b"\r"), b"data: [DONE]\r\r"]
    data = b"".join(events)
    relayed, usage = meter("openai.chat", "gpt-5", resplit(data, cuts), hide=True)
    assert relayed == data.replace(events[-2], b"")
    assert usage.counted_output_text == "".join(TEXTS)
    assert usage.output == 700 and usage.complete
