"""Record mode through the addon's hooks in mitmproxy's test kit (tests/proxy/addon_kit.py).

The logic of the subprocess tests (test_addon.py and test_hostile_inputs.py beside this file,
tests/proxy/modes/test_sdk_record.py) at the addon's own seam: each vendor's reply shape and status,
refusals in each vendor's error shape, one call-log line per call, masks in the request hash,
failing closed on a call log that cannot be written. No proxy process, no socket but the addon's own
stream server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions

from tests.proxy.addon_kit import HAIKU, addon_context
from tests.proxy.flow.test_intake import CRASHERS
from tests.proxy.small_disk import fill, mounted_tmpfs

DOCS = ["the lighthouse keeper", "a recipe for soup", "lighthouse lamps at night"]
MESSAGE = {"model": HAIKU, "max_tokens": 64, "messages": [{"role": "user", "content": "Hello"}]}
CHAT = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hello"}]}

# (path, method, body, route, a check of the reply's wire shape)
RECORD_CASES: dict[str, tuple[str, str, dict[str, Any] | None, str, Any]] = {
    "anthropic messages": (
        "/anthropic/v1/messages",
        "POST",
        MESSAGE,
        "anthropic.messages",
        lambda r: r["type"] == "message" and r["content"][0]["type"] == "text",
    ),
    "anthropic count_tokens": (
        "/anthropic/v1/messages/count_tokens",
        "POST",
        {"model": HAIKU, "messages": MESSAGE["messages"]},
        "anthropic.count_tokens",
        lambda r: isinstance(r["input_tokens"], int) and r["input_tokens"] > 0,
    ),
    "anthropic models": (
        "/anthropic/v1/models",
        "GET",
        None,
        "anthropic.models",
        lambda r: r["data"] and all(m["type"] == "model" for m in r["data"]),
    ),
    "openai chat": (
        "/openai/v1/chat/completions",
        "POST",
        CHAT,
        "openai.chat",
        lambda r: r["object"] == "chat.completion" and r["choices"][0]["message"]["content"],
    ),
    "openai responses": (
        "/openai/v1/responses",
        "POST",
        {"model": "gpt-4.1-mini", "input": "Hello", "max_output_tokens": 32},
        "openai.responses",
        lambda r: r["object"] == "response" and r["status"] == "completed",
    ),
    "openai embeddings": (
        "/openai/v1/embeddings",
        "POST",
        {"model": "text-embedding-3-small", "input": ["one", "two"]},
        "openai.embeddings",
        lambda r: [len(d["embedding"]) for d in r["data"]] == [1536, 1536],
    ),
    "openai models": (
        "/openai/v1/models",
        "GET",
        None,
        "openai.models",
        lambda r: r["object"] == "list" and r["data"],
    ),
    "cohere rerank": (
        "/cohere/v2/rerank",
        "POST",
        {"model": "rerank-v3.5", "query": "lighthouse", "documents": DOCS},
        "cohere.rerank",
        lambda r: r["results"][-1]["index"] == 1,
    ),
    "voyage rerank": (
        "/voyage/v1/rerank",
        "POST",
        {"model": "rerank-2", "query": "lighthouse", "documents": DOCS},
        "voyage.rerank",
        lambda r: r["data"][-1]["index"] == 1,
    ),
}


@pytest.mark.parametrize("case", RECORD_CASES)
async def test_each_route_answers_in_its_vendors_wire_shape_and_logs_one_line(
    tmp_path: Path, case: str
) -> None:
    path, method, body, route, shape = RECORD_CASES[case]
    async with addon_context(tmp_path) as proxy:
        status, reply, flow = await proxy.call(path, body, method=method)
        assert status == 200, reply
        assert flow.response.headers["content-type"].startswith("application/json")
        assert shape(reply), reply
        again_status, again, _ = await proxy.call(path, body, method=method)
    assert again_status == 200 and again == reply  # deterministic: the same request, the same reply
    first, second = proxy.calls()
    assert first["route"] == route and first["vendor"] == path.split("/")[1]
    assert (first["mode"], first["status"], first["outcome"]) == ("record", 200, "ok")
    assert first["tokens"]["source"] == "stub"
    assert first["request_hash"] == second["request_hash"]
    assert [first["seq"], second["seq"]] == [1, 2]


@pytest.mark.parametrize(
    ("path", "body", "event"),
    [
        ("/anthropic/v1/messages", {**MESSAGE, "stream": True}, "event: message_stop"),
        ("/openai/v1/chat/completions", {**CHAT, "stream": True}, "data: [DONE]"),
    ],
)
async def test_a_streamed_reply_is_played_as_server_sent_events(
    tmp_path: Path, path: str, body: dict[str, Any], event: str
) -> None:
    async with addon_context(tmp_path) as proxy:
        status, text, flow = await proxy.call(path, body)
        _, plain, _ = await proxy.call(path, {k: v for k, v in body.items() if k != "stream"})
    assert status == 200 and flow.response.stream is True
    assert flow.response.headers["content-type"].startswith("text/event-stream")
    assert text.rstrip().endswith(event) or event in text
    streamed, unstreamed = proxy.calls()
    assert streamed["stream"] is True and streamed["outcome"] == "ok"
    assert streamed["response_chunks"] and len(streamed["response_chunks"]) > 1
    # The stub answers a stream and a plain call of one request alike (proxy.flow.intake
    # STREAM_FIELDS).
    reply_text = (
        plain["content"][0]["text"]
        if "anthropic" in path
        else plain["choices"][0]["message"]["content"]
    )
    assert streamed_text(text) == reply_text
    assert streamed["request_hash"] != unstreamed["request_hash"]


def streamed_text(events: str) -> str:
    """The text of an Anthropic or OpenAI chat event stream, its deltas joined."""
    text = []
    for line in events.splitlines():
        if not line.startswith("data: {"):
            continue
        event = json.loads(line.removeprefix("data: "))
        if event.get("type") == "content_block_delta":
            text.append(event["delta"].get("text", ""))
        for choice in event.get("choices", []):
            text.append(choice["delta"].get("content") or "")
    return "".join(text)


async def test_the_listener_port_names_the_arm_and_the_purpose_header_is_not_sent_on(
    tmp_path: Path,
) -> None:
    async with addon_context(tmp_path, harness_arm_ports=["8081=alpha", "8082=beta"]) as proxy:
        flow = proxy.flow(
            "/anthropic/v1/messages", MESSAGE, headers={"X-Harness-Purpose": "guard"}, port=8082
        )
        await proxy.send(flow)
        await proxy.call("/openai/v1/embeddings", {"model": "text-embedding-3-small", "input": "x"})
    assert "x-harness-purpose" not in flow.request.headers
    guard, embedding = proxy.calls()
    assert (guard["arm"], guard["purpose"]) == ("beta", "guard")
    assert (embedding["arm"], embedding["purpose"]) == ("default", "embedding")


ERROR_SHAPES = {
    "anthropic": lambda r: r["type"] == "error" and r["error"]["type"] and r["error"]["message"],
    "openai": lambda r: set(r["error"]) == {"message", "type", "param", "code"},
    "cohere": lambda r: set(r) == {"message"},
    "voyage": lambda r: set(r) == {"detail"},
}
ANTHROPIC = "/anthropic/v1/messages"
VENDOR_PATHS = {
    "anthropic": ANTHROPIC,
    "openai": "/openai/v1/chat/completions",
    "cohere": "/cohere/v2/rerank",
    "voyage": "/voyage/v1/rerank",
}
GOOD_CASES = {
    "anthropic": "anthropic messages",
    "openai": "openai chat",
    "cohere": "cohere rerank",
    "voyage": "voyage rerank",
}
HOSTILE = {
    "not json": (b"{not json", 400),
    "not an object": (b"[1, 2]", 400),
    "duplicate key": (b'{"model": "a", "model": "b"}', 400),
    "lone surrogate": (b'{"model": "\\ud800"}', 400),
    "1,500 deep": (b"[" * 1500 + b"]" * 1500, 400),
    "1e400": (b'{"model": 1e400}', 400),
    "missing fields": (b"{}", 400),
    "over the body limit": (b'{"model": "' + b"x" * 5000 + b'"}', 413),
}


@pytest.mark.parametrize("vendor", VENDOR_PATHS)
@pytest.mark.parametrize("kind", HOSTILE)
async def test_hostile_input_is_refused_in_the_vendors_error_shape(
    tmp_path: Path, vendor: str, kind: str
) -> None:
    raw, expected = HOSTILE[kind]
    async with addon_context(tmp_path, harness_body_limit=4096) as proxy:
        status, reply, _ = await proxy.call(VENDOR_PATHS[vendor], raw)
        good_path, _, good_body, _, _ = RECORD_CASES[GOOD_CASES[vendor]]
        after, _, _ = await proxy.call(good_path, good_body)
    assert status == expected
    assert ERROR_SHAPES[vendor](reply), reply
    assert "Traceback" not in json.dumps(reply)
    refused, served = proxy.calls()
    assert (refused["status"], refused["outcome"]) == (expected, "bad_request")
    assert after == 200 and served["outcome"] == "ok"  # the proxy keeps serving


@pytest.mark.parametrize("kind", CRASHERS)
async def test_the_bodies_that_once_crashed_the_metering_are_the_vendors_400(
    tmp_path: Path, kind: str
) -> None:
    vendor, raw = CRASHERS[kind]
    async with addon_context(tmp_path) as proxy:
        status, reply, _ = await proxy.call(VENDOR_PATHS[vendor], raw)
    assert status == 400 and ERROR_SHAPES[vendor](reply)
    assert reply["error"]["type"] == "invalid_request_error"
    assert proxy.calls()[0]["outcome"] == "bad_request"


async def test_unknown_routes_and_compressed_bodies_are_refused(tmp_path: Path) -> None:
    async with addon_context(tmp_path) as proxy:
        nowhere, missing, _ = await proxy.call("/anthropic/v1/nowhere", method="GET")
        gzip, packed, _ = await proxy.call(
            "/openai/v1/chat/completions", CHAT, headers={"content-encoding": "gzip"}
        )
    assert nowhere == 404 and missing["error"]["type"] == "not_found_error"
    assert gzip == 400 and "uncompressed" in packed["error"]["message"]
    assert [c["outcome"] for c in proxy.calls()] == ["bad_request", "bad_request"]


async def test_masks_take_their_fields_out_of_the_request_hash(tmp_path: Path) -> None:
    one = {**CHAT, "user": "session-1", "metadata": {"trace": "a"}}
    two = {**CHAT, "user": "session-2", "metadata": {"trace": "b"}}
    async with addon_context(tmp_path / "plain") as plain:
        await plain.call("/openai/v1/chat/completions", one)
        await plain.call("/openai/v1/chat/completions", two)
    async with addon_context(tmp_path / "masked", harness_masks=["metadata.trace"]) as masked:
        _, reply_one, _ = await masked.call("/openai/v1/chat/completions", one)
        _, reply_two, _ = await masked.call("/openai/v1/chat/completions", two)
    # `user` is masked by default; `metadata.trace` only when the study says so.
    plain_one, plain_two = plain.calls()
    assert plain_one["request_hash"] != plain_two["request_hash"]
    masked_one, masked_two = masked.calls()
    assert masked_one["request_hash"] == masked_two["request_hash"]
    assert masked_one["request_hash"] != plain_one["request_hash"]
    assert reply_one["choices"] == reply_two["choices"]  # the stub chose from the masked request
    # The body as sent is kept whole: only the hash leaves the masked fields out.
    assert masked_one["request_body"] != masked_two["request_body"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "disk") as disk:
        yield disk


async def test_a_disk_that_fills_up_stops_the_proxy_serving(small_disk: Path) -> None:
    """Once the call log or the body store cannot be written, every call is refused (the vendor's
    503), for good: a call is never served that the log does not hold."""
    async with addon_context(small_disk / "run") as proxy:
        fill(small_disk)
        # The last pages already allocated still take a few lines; the disk is full after them.
        statuses = [(await proxy.call(ANTHROPIC, {**MESSAGE, "n": n}))[0] for n in range(30)]
        (small_disk / "filler").unlink()
        later, stopped, _ = await proxy.call("/openai/v1/chat/completions", CHAT)
    assert 503 in statuses, statuses
    served = statuses.index(503)
    assert statuses[served:] == [503] * (30 - served) and later == 503
    assert "harness proxy stopped" in stopped["error"]["message"]
    logged = (small_disk / "run" / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["status"] for line in logged[:served]] == [200] * served


async def test_a_run_directory_that_cannot_be_written_is_refused_at_start(tmp_path: Path) -> None:
    (tmp_path / "calls.jsonl").mkdir()
    with pytest.raises(exceptions.OptionsError, match="cannot write to run directory"):
        async with addon_context(tmp_path):
            pass


@pytest.mark.parametrize(
    "options",
    [
        {"harness_mode": "playback"},
        {"harness_arm_ports": ["alpha"]},
        {"harness_body_limit": 0},
        {"harness_deadline": -1.0},
        {"harness_upstreams": ["mistral=https://example.invalid"]},
        {"harness_cap": "ten dollars"},
        {"harness_replay_from": ""},
    ],
    ids=lambda options: next(iter(options)),
)
async def test_bad_options_are_refused_when_set(tmp_path: Path, options: dict[str, Any]) -> None:
    if "harness_replay_from" in options:
        options = {"harness_mode": "replay", **options}
    with pytest.raises(exceptions.OptionsError):
        async with addon_context(tmp_path, **options):
            pass
