"""The fake vendor, driven by the official SDKs over real sockets (HTTP and TLS, sync and async)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from tests.fakevendor import BehaviourError, FakeVendor, parse_behaviour

HAIKU = "claude-haiku-4-5-20251001"
_TEXT = "please tell me a fairly long story about the sea and boats"
STORY: list[MessageParam] = [{"role": "user", "content": _TEXT}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": _TEXT}]
# A client timeout well under every delay the tests ask the fake for.
SHORT = 0.5


@pytest.fixture(scope="module")
def http_vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fv:
        yield fv


@pytest.fixture(scope="module")
def tls_vendor() -> Iterator[FakeVendor]:
    with FakeVendor(tls=True) as fv:
        yield fv


@pytest.fixture(params=["http", "https"])
def fv(request: pytest.FixtureRequest) -> FakeVendor:
    """Each test that takes `fv` runs over plain HTTP and over TLS."""
    name = "http_vendor" if request.param == "http" else "tls_vendor"
    vendor: FakeVendor = request.getfixturevalue(name)
    vendor.reset()
    return vendor


@pytest.fixture
def plain(http_vendor: FakeVendor) -> FakeVendor:
    """The HTTP fake only, for tests whose subject is not the transport."""
    http_vendor.reset()
    return http_vendor


def _http_client(fv: FakeVendor, timeout: float) -> httpx2.Client:
    verify = fv.ssl_context() if fv.tls else True
    return httpx2.Client(verify=verify, timeout=timeout)


def ant(fv: FakeVendor, timeout: float = 30.0, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=fv.url,
        api_key="sk-ant-test",
        max_retries=retries,
        timeout=timeout,
        http_client=_http_client(fv, timeout),
    )


def oai(fv: FakeVendor, timeout: float = 30.0, retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=fv.url + "/v1",
        api_key="sk-test",
        max_retries=retries,
        timeout=timeout,
        http_client=_http_client(fv, timeout),
    )


def fake(behaviour: str) -> dict[str, str]:
    return {"x-fake-behaviour": behaviour}


# -- normal replies ----------------------------------------------------------------------------


def test_anthropic_plain_and_streamed(fv: FakeVendor) -> None:
    client = ant(fv)
    message = client.messages.create(model=HAIKU, max_tokens=300, messages=STORY)
    with client.messages.stream(model=HAIKU, max_tokens=300, messages=STORY) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert message.content[0].type == "text"
    assert streamed == message.content[0].text
    assert final.usage.output_tokens == message.usage.output_tokens > 1
    plain_served, stream_served = fv.wait_idle()  # the client may finish before the fake does
    assert plain_served.outcome == stream_served.outcome == "complete"
    assert stream_served.usage_sent and stream_served.text_sent == streamed
    assert stream_served.output_tokens == message.usage.output_tokens
    assert stream_served.input_tokens == message.usage.input_tokens
    request = fv.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.body["messages"] == STORY and request.api_key == "sk-ant-test"
    assert "anthropic-version" in request.headers


def test_openai_chat_usage_chunk_only_when_asked(fv: FakeVendor) -> None:
    client = oai(fv)
    plain = client.chat.completions.create(model="gpt-4.1", messages=CHAT)
    bare = list(client.chat.completions.create(model="gpt-4.1", messages=CHAT, stream=True))
    asked = list(
        client.chat.completions.create(
            model="gpt-4.1", messages=CHAT, stream=True, stream_options={"include_usage": True}
        )
    )
    assert plain.usage is not None
    assert all(c.choices and c.usage is None for c in bare)
    assert all(c.choices for c in asked[:-1]) and asked[-1].choices == []
    assert asked[-1].usage == plain.usage
    text = "".join(c.choices[0].delta.content or "" for c in bare)
    assert text == plain.choices[0].message.content
    bare_served, asked_served = fv.wait_idle()[1:]
    assert not bare_served.usage_sent and asked_served.usage_sent
    assert bare_served.output_tokens == asked_served.output_tokens == plain.usage.completion_tokens
    assert fv.requests[0].api_key == "sk-test"


def test_openai_responses_embeddings_models_and_count_tokens(fv: FakeVendor) -> None:
    client = oai(fv)
    response = client.responses.create(model="gpt-4.1", input="tell me a story")
    events = list(client.responses.create(model="gpt-4.1", input="tell me a story", stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == response.output_text != ""
    embedding = client.embeddings.create(model="text-embedding-3-small", input="hello")
    assert len(embedding.data[0].embedding) == 1536
    assert "gpt-4.1" in [m.id for m in client.models.list()]
    assert HAIKU in [m.id for m in ant(fv).models.list()]
    counted = ant(fv).messages.count_tokens(model=HAIKU, messages=STORY)
    assert counted.input_tokens > 0
    assert [s.route for s in fv.wait_idle()] == [
        "openai.responses",
        "openai.responses",
        "openai.embeddings",
        "openai.models",
        "anthropic.models",
        "anthropic.count_tokens",
    ]


async def test_async_clients(fv: FakeVendor) -> None:
    verify = fv.ssl_context() if fv.tls else True
    a = anthropic.AsyncAnthropic(
        base_url=fv.url, api_key="k", max_retries=0, http_client=httpx2.AsyncClient(verify=verify)
    )
    o = openai.AsyncOpenAI(
        base_url=fv.url + "/v1",
        api_key="k",
        max_retries=0,
        http_client=httpx2.AsyncClient(verify=verify),
    )
    async with a.messages.stream(model=HAIKU, max_tokens=300, messages=STORY) as stream:
        text = "".join([t async for t in stream.text_stream])
    chunks = [
        c
        async for c in await o.chat.completions.create(model="gpt-4.1", messages=CHAT, stream=True)
    ]
    assert text and len(chunks) > 2
    assert [s.outcome for s in await asyncio.to_thread(fv.wait_idle)] == ["complete"] * 2
    await a.close()
    await o.close()


def test_tls_needs_the_fake_ca(tls_vendor: FakeVendor) -> None:
    client = anthropic.Anthropic(
        base_url=tls_vendor.url, api_key="k", max_retries=0, http_client=httpx2.Client(verify=True)
    )
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(model=HAIKU, max_tokens=10, messages=STORY)
    assert tls_vendor.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")
    local = httpx2.get(
        tls_vendor.url.replace("127.0.0.1", "localhost") + "/v1/models",
        verify=tls_vendor.ssl_context(),
    )
    assert local.status_code == 200


# -- statuses --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "anthropic_error", "anthropic_type"),
    [
        (529, anthropic.OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (503, anthropic.InternalServerError, "api_error"),
    ],
)
def test_status_errors_anthropic(
    fv: FakeVendor, status: int, anthropic_error: type[Exception], anthropic_type: str
) -> None:
    with pytest.raises(anthropic_error) as caught:
        ant(fv).messages.create(
            model=HAIKU,
            max_tokens=10,
            messages=STORY,
            stream=True,
            extra_headers=fake(f"status={status}"),
        )
    assert isinstance(caught.value, anthropic.APIStatusError)
    assert caught.value.status_code == status
    assert caught.value.body["error"]["type"] == anthropic_type  # type: ignore[index]
    served = fv.wait_idle()[0]
    assert served.status == status and served.input_tokens == 0


@pytest.mark.parametrize("status", [500, 502, 503])
def test_status_errors_openai(plain: FakeVendor, status: int) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        oai(plain).chat.completions.create(
            model="gpt-4.1", messages=CHAT, extra_headers=fake(f"status={status}")
        )
    assert caught.value.status_code == status
    body: Any = caught.value.body
    assert body["type"] == "server_error"


def test_429_with_retry_after(plain: FakeVendor) -> None:
    with pytest.raises(anthropic.RateLimitError) as a_err:
        ant(plain).messages.create(
            model=HAIKU,
            max_tokens=10,
            messages=STORY,
            extra_headers=fake("status=429;retry_after=2"),
        )
    with pytest.raises(openai.RateLimitError) as o_err:
        oai(plain).chat.completions.create(
            model="gpt-4.1", messages=CHAT, extra_headers=fake("status=429;retry_after=2")
        )
    assert a_err.value.response.headers["retry-after"] == "2"
    assert o_err.value.response.headers["retry-after"] == "2"


def test_script_drives_requests_without_header_and_sdk_retries(plain: FakeVendor) -> None:
    plain.script(["status=429;retry_after=0.1", "status=529", None])
    message = ant(plain, retries=3).messages.create(model=HAIKU, max_tokens=50, messages=STORY)
    assert message.content
    assert [s.status for s in plain.wait_idle()] == [429, 529, 200]
    assert [r.headers["x-stainless-retry-count"] for r in plain.requests] == ["0", "1", "2"]


def test_header_wins_and_does_not_consume_the_script(plain: FakeVendor) -> None:
    plain.script(["status=500"])
    client = oai(plain)
    client.embeddings.create(model="text-embedding-3-small", input="x", extra_headers=fake(""))
    with pytest.raises(openai.InternalServerError):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    client.embeddings.create(model="text-embedding-3-small", input="x")
    assert [s.status for s in plain.wait_idle()] == [200, 500, 200]


def test_unknown_behaviour_is_refused(plain: FakeVendor) -> None:
    with pytest.raises(BehaviourError):
        plain.script(["cut_afterr=3"])
    with pytest.raises(anthropic.BadRequestError, match="unknown fake behaviour"):
        ant(plain).messages.create(
            model=HAIKU, max_tokens=10, messages=STORY, extra_headers=fake("explode")
        )
    assert parse_behaviour("trickle").trickle == 0.2
    assert parse_behaviour("cut_after=3;stall_after=1").interruption == ("stall", 1)


def test_api_keys_are_checked_when_configured() -> None:
    with FakeVendor(api_keys={"anthropic": "study-key", "openai": "study-key"}) as fv:
        with pytest.raises(anthropic.AuthenticationError):
            ant(fv).messages.create(model=HAIKU, max_tokens=10, messages=STORY)
        ok = anthropic.Anthropic(base_url=fv.url, api_key="study-key", max_retries=0)
        assert ok.messages.create(model=HAIKU, max_tokens=10, messages=STORY).content
        with pytest.raises(openai.AuthenticationError):
            oai(fv).models.list()
        assert [r.api_key for r in fv.requests] == ["sk-ant-test", "study-key", "sk-test"]


# -- errors after HTTP 200 and broken streams ------------------------------------------------------


def test_error_after_anthropic(fv: FakeVendor) -> None:
    seen: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        for event in ant(fv).messages.create(
            model=HAIKU,
            max_tokens=300,
            messages=STORY,
            stream=True,
            extra_headers=fake("error_after=5"),
        ):
            seen.append(event.type)
    assert caught.value.status_code == 200
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert "content_block_delta" in seen and "message_stop" not in seen
    served = fv.wait_idle()[0]
    assert served.outcome == "complete" and served.events_sent == 6 and not served.usage_sent
    assert 0 < served.output_tokens < served.full_output_tokens


def test_error_after_openai(plain: FakeVendor) -> None:
    client = oai(plain)
    with pytest.raises(openai.APIError, match="error after HTTP 200"):
        list(
            client.chat.completions.create(
                model="gpt-4.1", messages=CHAT, stream=True, extra_headers=fake("error_after=3")
            )
        )
    events = list(
        client.responses.create(
            model="gpt-4.1", input="story", stream=True, extra_headers=fake("error_after=3")
        )
    )
    assert events[-1].type == "error" and len(events) == 4


def test_cut_after_breaks_the_stream(fv: FakeVendor) -> None:
    with pytest.raises((anthropic.APIConnectionError, httpx2.RemoteProtocolError)):
        for _ in ant(fv).messages.create(
            model=HAIKU,
            max_tokens=300,
            messages=STORY,
            stream=True,
            extra_headers=fake("cut_after=5"),
        ):
            pass
    with pytest.raises(openai.APIConnectionError):
        for _ in oai(fv).chat.completions.create(
            model="gpt-4.1", messages=CHAT, stream=True, extra_headers=fake("cut_after=4")
        ):
            pass
    a, o = fv.wait_idle()
    assert (a.outcome, a.events_sent, o.outcome, o.events_sent) == ("cut", 5, "cut", 4)
    assert not a.usage_sent and 0 < a.output_tokens < a.full_output_tokens
    assert a.input_tokens > 0
    assert fv.disconnects == []  # the fake hung up, not the client


def test_cut_after_never_sends_the_terminal_event(plain: FakeVendor) -> None:
    with pytest.raises(openai.APIConnectionError):
        list(
            oai(plain).chat.completions.create(
                model="gpt-4.1", messages=CHAT, stream=True, extra_headers=fake("cut_after=999")
            )
        )
    served = plain.wait_idle()[0]
    assert served.events_sent == served.events_total - 1 and served.outcome == "cut"


def test_reset_after(plain: FakeVendor) -> None:
    with pytest.raises(openai.APIConnectionError):
        list(
            oai(plain).responses.create(
                model="gpt-4.1", input="story", stream=True, extra_headers=fake("reset_after=5")
            )
        )
    with pytest.raises(anthropic.APIConnectionError):
        ant(plain).messages.create(
            model=HAIKU, max_tokens=10, messages=STORY, extra_headers=fake("reset")
        )
    assert [s.outcome for s in plain.wait_idle()] == ["reset", "reset"]


# -- usage shapes ---------------------------------------------------------------------------------


def test_no_usage(plain: FakeVendor) -> None:
    chunks = list(
        oai(plain).chat.completions.create(
            model="gpt-4.1",
            messages=CHAT,
            stream=True,
            stream_options={"include_usage": True},
            extra_headers=fake("no_usage"),
        )
    )
    assert all(c.choices and c.usage is None for c in chunks)
    raw = ant(plain).messages.create(
        model=HAIKU, max_tokens=300, messages=STORY, stream=True, extra_headers=fake("no_usage")
    )
    deltas = [e for e in raw if e.type == "message_delta"]
    assert len(deltas) == 1 and "usage" not in deltas[0].model_fields_set
    events = list(
        oai(plain).responses.create(
            model="gpt-4.1", input="story", stream=True, extra_headers=fake("no_usage")
        )
    )
    assert events[-1].type == "response.completed" and events[-1].response.usage is None
    for served in plain.wait_idle():
        assert served.outcome == "complete" and not served.usage_sent
        # Counted from the text sent with the stubs' estimate, which is what their usage says.
        assert served.output_tokens == served.full_output_tokens


def test_usage_in_choice_chunk(plain: FakeVendor) -> None:
    for options in ({"include_usage": True}, None):
        extra: dict[str, Any] = {"stream_options": options} if options else {}
        chunks = list(
            oai(plain).chat.completions.create(
                model="gpt-4.1",
                messages=CHAT,
                stream=True,
                extra_headers=fake("usage_in_choice_chunk"),
                **extra,
            )
        )
        assert all(c.choices for c in chunks)
        assert chunks[-1].usage is not None and chunks[-1].choices[0].finish_reason == "stop"
        assert all(c.usage is None for c in chunks[:-1])
    assert all(s.usage_sent for s in plain.wait_idle())


# -- slow vendors and disconnects ------------------------------------------------------------------


def test_first_byte_delay_times_out_and_the_client_leaving_is_seen(fv: FakeVendor) -> None:
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        ant(fv, timeout=SHORT).messages.create(
            model=HAIKU, max_tokens=10, messages=STORY, extra_headers=fake("first_byte_delay=5")
        )
    gone = fv.wait_for_disconnect(60)
    # The client left before the delayed first byte: nothing was sent (no wall-clock bound).
    assert gone.request_id == fv.requests[0].id and gone.events_sent == 0
    assert gone.monotonic >= started
    served = fv.served_for(gone.request_id)
    assert served.outcome == "disconnected" and served.first_byte is None


def test_hang_and_stall_after(plain: FakeVendor) -> None:
    with pytest.raises(openai.APITimeoutError):
        oai(plain, timeout=SHORT).embeddings.create(
            model="text-embedding-3-small", input="x", extra_headers=fake("hang")
        )
    seen: list[Any] = []
    with pytest.raises(openai.APITimeoutError):
        for chunk in oai(plain, timeout=SHORT).chat.completions.create(
            model="gpt-4.1", messages=CHAT, stream=True, extra_headers=fake("stall_after=2")
        ):
            seen.append(chunk)
    assert len(seen) == 2
    served = plain.wait_idle()
    assert [(s.outcome, s.events_sent) for s in served] == [
        ("disconnected", 0),
        ("disconnected", 2),
    ]
    assert len(plain.disconnects) == 2


def test_trickle_defeats_read_timeouts_but_not_a_deadline(fv: FakeVendor) -> None:
    verify = fv.ssl_context() if fv.tls else True
    body = {"model": "gpt-4.1", "messages": STORY, "stream": True}
    received = b""
    with (
        httpx2.Client(verify=verify, timeout=SHORT) as client,
        client.stream(
            "POST", fv.url + "/v1/chat/completions", json=body, headers=fake("trickle=0.05")
        ) as response,
    ):
        assert response.status_code == 200
        deadline = time.monotonic() + 1.5  # three times the read timeout: still no error
        for part in response.iter_raw():
            received += part
            if time.monotonic() > deadline:
                break
    assert 5 < len(received) < 100  # bytes trickled one at a time, far from a whole reply
    gone = fv.wait_for_disconnect(5)
    assert fv.served_for(gone.request_id).outcome == "disconnected"
    # A per-byte interval longer than the read timeout does time the SDK out.
    with pytest.raises(anthropic.APITimeoutError):
        ant(fv, timeout=SHORT).messages.create(
            model=HAIKU, max_tokens=10, messages=STORY, extra_headers=fake("trickle=2")
        )


def test_trickle_pads_forever_after_the_reply(plain: FakeVendor) -> None:
    with (
        httpx2.Client(timeout=SHORT) as client,
        client.stream(
            "GET",
            plain.url + "/v1/models",
            headers={"authorization": "Bearer k", **fake("trickle=0")},
        ) as response,
    ):
        received = b""
        for part in response.iter_raw():
            received += part
            if len(received) > 2000:
                break
    assert received.startswith(b'{"object":"list"')
    assert received.rstrip().endswith(b"}") and received.endswith(b" ")


def test_client_disconnect_mid_stream(fv: FakeVendor) -> None:
    client = ant(fv)
    texts: list[str] = []
    with client.messages.stream(
        model=HAIKU, max_tokens=300, messages=STORY, extra_headers=fake("chunk_delay=0.2")
    ) as stream:
        for text in stream.text_stream:
            texts.append(text)
            if len(texts) == 2:
                break
    gone = fv.wait_for_disconnect(5)
    served = fv.served_for(gone.request_id)
    assert served.outcome == "disconnected" and not served.usage_sent
    assert served.text_sent.startswith("".join(texts))
    assert 0 < served.output_tokens < served.full_output_tokens
    assert served.events_sent < served.events_total


async def test_async_client_disconnect(plain: FakeVendor) -> None:
    client = openai.AsyncOpenAI(base_url=plain.url + "/v1", api_key="k", max_retries=0)
    stream = await client.chat.completions.create(
        model="gpt-4.1", messages=CHAT, stream=True, extra_headers=fake("chunk_delay=0.2")
    )
    async for _ in stream:
        break
    await stream.close()
    # The fake runs on its own thread: waiting on it must not block this test's loop.
    gone = await asyncio.to_thread(plain.wait_for_disconnect, 5)
    assert gone.events_sent >= 1
    await client.close()


def test_concurrent_clients(plain: FakeVendor) -> None:
    client = oai(plain)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            list(
                client.chat.completions.create(
                    model="gpt-4.1",
                    messages=CHAT,
                    stream=True,
                    extra_headers=fake("chunk_delay=0.01"),
                )
            )
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({r.id for r in plain.requests}) == 16
    assert all(s.outcome == "complete" for s in plain.wait_idle())


def test_reset_clears_state(plain: FakeVendor) -> None:
    plain.script(["status=500", "status=500"])
    with pytest.raises(openai.InternalServerError):
        oai(plain).models.list()
    plain.reset()
    assert plain.requests == [] and plain.served == [] and plain.disconnects == []
    assert oai(plain).models.list().data  # the second scripted 500 is gone too
