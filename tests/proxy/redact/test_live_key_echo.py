"""An upstream that quotes the study's key back never gets it to the arm or into the run.

The fake vendor echoes the key it received (tests/fakevendor/echo.py): in a 401 message, in the
reply text (plain, streamed, split across network reads at every offset, JSON-escaped), in
response headers, and in a gzip or br body sent despite `accept-encoding: identity`. Each call
goes through the official SDKs and a real proxy process; each test asserts the key is absent from
what the SDK saw, from calls.jsonl, from the decompressed body pack and from the proxy's log, that
the marker stands in its place, and that the call is flagged `secret_redacted`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from rundir.calls.packread import PackReader
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import STUDY_ANTHROPIC_KEY, STUDY_OPENAI_KEY, start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
MINI = "gpt-4.1-mini"
USER: list[MessageParam] = [{"role": "user", "content": "Tell me about lighthouses."}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Tell me about lighthouses."}]
# A leak of part of a key is still a leak: its distinctive tail is looked for too.
SECRETS = [STUDY_ANTHROPIC_KEY, STUDY_OPENAI_KEY, STUDY_ANTHROPIC_KEY[-16:], STUDY_OPENAI_KEY[-16:]]
ANT_MARK = "[redacted:ANTHROPIC_API_KEY]"
OAI_MARK = "[redacted:OPENAI_API_KEY]"


@pytest.fixture(scope="module")
def vendor() -> Iterator[FakeVendor]:
    keys = {"anthropic": STUDY_ANTHROPIC_KEY, "openai": STUDY_OPENAI_KEY}
    with FakeVendor(api_keys=keys) as fake:
        yield fake


@pytest.fixture(scope="module")
def proxy(vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    proc = start_live_proxy(tmp_path_factory.mktemp("echo"), vendor, cap="5")
    try:
        yield proc
    finally:
        proc.stop()


def _leaks(label: str, data: bytes | str) -> list[str]:
    raw = data.encode() if isinstance(data, str) else data
    return [f"{secret!r} in {label}" for secret in SECRETS if secret.encode() in raw]


class Calls:
    """The calls one test makes, read back from the run once they are logged."""

    def __init__(self, proxy: ProxyProcess) -> None:
        self.proxy = proxy
        self.before = len(proxy.calls())

    def check(self, count: int, marker: str | None) -> list[dict[str, Any]]:
        """Asserts the run holds no key, the calls are flagged and (given a marker) that it
        stands where the key was in each stored reply; returns this test's calls."""
        proxy = self.proxy
        calls = proxy.calls(at_least=self.before + count)[self.before :]
        assert len(calls) == count
        for call in calls:
            assert "secret_redacted" in call["flags"], call
        log = proxy.run_dir / "calls.jsonl"
        assert _leaks("calls.jsonl", log.read_bytes()) == []
        pack = PackReader.open(proxy.run_dir)
        bodies = [pack.get(call["response_hash"]) for call in calls]
        for body in bodies:
            assert marker is None or marker.encode() in body, body[:300]
        leaks = [leak for d in pack.index for leak in _leaks(f"pack {d}", pack.get(d))]
        assert leaks == []
        stderr = proxy.stderr_path.read_bytes()
        assert _leaks("proxy stderr", stderr) == []
        assert b"quoted a study key back" in stderr
        return calls


def _anthropic(proxy: ProxyProcess) -> anthropic.Anthropic:
    return proxy.anthropic()


def _echo(behaviour: str) -> dict[str, str]:
    return {"x-fake-behaviour": behaviour}


def test_a_401_quoting_the_key_reaches_the_sdk_without_it(proxy: ProxyProcess) -> None:
    calls = Calls(proxy)
    seen: list[str] = []
    with pytest.raises(openai.AuthenticationError) as oai_err:
        proxy.openai().chat.completions.create(
            model=MINI, max_tokens=20, messages=CHAT, extra_headers=_echo("echo_key=error")
        )
    with pytest.raises(anthropic.AuthenticationError) as ant_err:
        _anthropic(proxy).messages.create(
            model=HAIKU, max_tokens=20, messages=USER, extra_headers=_echo("echo_key=error")
        )
    for err in (oai_err.value, ant_err.value):
        seen += [str(err), repr(err.body), err.response.text]
    assert OAI_MARK in str(oai_err.value) and ANT_MARK in str(ant_err.value)
    assert [leak for text in seen for leak in _leaks("SDK error", text)] == []
    logged = calls.check(2, "[redacted:")
    assert [c["status"] for c in logged] == [401, 401]


def test_a_reply_text_quoting_the_key_is_redacted_plain_and_streamed(
    proxy: ProxyProcess,
) -> None:
    calls = Calls(proxy)
    echo = _echo("echo_key=text")
    reply = proxy.openai().chat.completions.create(
        model=MINI, max_tokens=20, messages=CHAT, extra_headers=echo
    )
    text = reply.choices[0].message.content or ""
    streamed = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in proxy.openai().chat.completions.create(
            model=MINI, max_tokens=20, messages=CHAT, stream=True, extra_headers=echo
        )
        if chunk.choices
    )
    message = _anthropic(proxy).messages.create(
        model=HAIKU, max_tokens=20, messages=USER, extra_headers=echo
    )
    with _anthropic(proxy).messages.stream(
        model=HAIKU, max_tokens=20, messages=USER, extra_headers=echo
    ) as stream:
        ant_streamed = "".join(stream.text_stream)
    assert text.startswith(OAI_MARK) and streamed.startswith(OAI_MARK), (text, streamed)
    assert message.content[0].type == "text" and message.content[0].text.startswith(ANT_MARK)
    assert ant_streamed.startswith(ANT_MARK)
    assert _leaks("SDK", text + streamed + message.model_dump_json() + ant_streamed) == []
    calls.check(4, "[redacted:")


def test_a_key_split_across_network_reads_at_every_offset_is_redacted(
    proxy: ProxyProcess,
) -> None:
    calls = Calls(proxy)
    client = proxy.openai()
    texts = []
    for offset in range(1, len(STUDY_OPENAI_KEY)):
        stream = client.chat.completions.create(
            model=MINI,
            max_tokens=20,
            messages=CHAT,
            stream=True,
            extra_headers=_echo(f"echo_key=text;echo_split={offset}"),
        )
        texts.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
    assert all(text.startswith(OAI_MARK) for text in texts), texts
    assert [leak for text in texts for leak in _leaks("SDK stream", text)] == []
    calls.check(len(texts), OAI_MARK)


def test_a_key_split_across_sse_events_is_redacted_from_the_joined_text(
    proxy: ProxyProcess,
) -> None:
    """No event holds the key, only the text the SDK joins from two deltas; every split point."""
    calls = Calls(proxy)
    ant, oai = _anthropic(proxy), proxy.openai()
    texts = []
    for offset in range(1, len(STUDY_ANTHROPIC_KEY)):
        echo = _echo(f"echo_key=events;echo_split={offset}")
        with ant.messages.stream(
            model=HAIKU, max_tokens=20, messages=USER, extra_headers=echo
        ) as stream:
            texts.append("".join(stream.text_stream))
        chunks = oai.chat.completions.create(
            model=MINI, max_tokens=20, messages=CHAT, stream=True, extra_headers=echo
        )
        texts.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
    assert all("[redacted:" in text for text in texts), texts
    assert [leak for text in texts for leak in _leaks("SDK joined text", text)] == []
    calls.check(len(texts), "[redacted:")


def test_a_json_escaped_key_is_redacted(proxy: ProxyProcess) -> None:
    calls = Calls(proxy)
    message = _anthropic(proxy).messages.create(
        model=HAIKU, max_tokens=20, messages=USER, extra_headers=_echo("echo_key=escaped")
    )
    assert message.content[0].type == "text"
    assert message.content[0].text.startswith(ANT_MARK), message.content[0].text
    assert _leaks("SDK", message.content[0].text) == []
    calls.check(1, ANT_MARK)


def test_a_header_quoting_the_key_is_redacted_in_name_and_value(proxy: ProxyProcess) -> None:
    calls = Calls(proxy)
    raw = proxy.openai().chat.completions.with_raw_response.create(
        model=MINI, max_tokens=20, messages=CHAT, extra_headers=_echo("echo_key=header")
    )
    head = "".join(f"{k}: {v}\n" for k, v in raw.headers.multi_items())
    assert raw.headers["x-echo-key"] == OAI_MARK
    assert "x-key-redacted-OPENAI_API_KEY" in raw.headers
    assert _leaks("SDK headers", head) == [] and raw.parse().choices
    calls.check(1, None)  # the body held no key: only the flag says the call was redacted


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_compressed_body_quoting_the_key_is_decoded_and_redacted(
    proxy: ProxyProcess, encoding: str
) -> None:
    calls = Calls(proxy)
    echo = _echo(f"echo_key=text;encode={encoding}")
    raw = proxy.openai().chat.completions.with_raw_response.create(
        model=MINI, max_tokens=20, messages=CHAT, extra_headers=echo
    )
    assert "content-encoding" not in raw.headers  # relayed decoded
    text = raw.parse().choices[0].message.content or ""
    with _anthropic(proxy).messages.stream(
        model=HAIKU, max_tokens=20, messages=USER, extra_headers=echo
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text.startswith(OAI_MARK) and streamed.startswith(ANT_MARK), (text, streamed)
    assert _leaks("SDK", text + streamed) == []
    logged = calls.check(2, "[redacted:")
    # Decoded, the usage was read from the vendor's own numbers, not counted.
    assert [c["tokens"]["source"] for c in logged] != ["reservation", "reservation"]
    assert final.usage.output_tokens > 0


def test_the_raw_bytes_an_arm_receives_hold_no_key(proxy: ProxyProcess) -> None:
    """Below the SDKs: status line, headers and body exactly as relayed."""
    calls = Calls(proxy)
    got = []
    for behaviour in ("echo_key=error", "echo_key=header", "echo_key=text;encode=gzip"):
        response = httpx.post(
            f"{proxy.openai_base}/chat/completions",
            json={"model": MINI, "max_tokens": 20, "messages": CHAT},
            headers={"authorization": "Bearer placeholder", **_echo(behaviour)},
            timeout=30,
        )
        if behaviour == "echo_key=header":
            assert response.reason_phrase == f"OK for {OAI_MARK}"
        got.append(
            f"{response.status_code} {response.reason_phrase}\n"
            + "".join(f"{k}: {v}\n" for k, v in response.headers.multi_items())
            + response.text
        )
    assert [leak for text in got for leak in _leaks("raw reply", text)] == []
    calls.check(3, None)


def test_a_stream_cut_after_half_a_key_never_relays_the_half(proxy: ProxyProcess) -> None:
    """The key's head ends the last event before the cut: held back, it never goes out."""
    calls = Calls(proxy)
    head = STUDY_ANTHROPIC_KEY[:30]
    received = b""
    # Anthropic's stream: message_start, ping, content_block_start, then the delta with the head.
    echo = _echo("echo_key=events;echo_split=30;cut_after=4")
    with (
        pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)),
        httpx.stream(
            "POST",
            f"{proxy.anthropic_base}/v1/messages",
            json={"model": HAIKU, "max_tokens": 20, "messages": USER, "stream": True},
            headers={"x-api-key": "placeholder", "anthropic-version": "2023-06-01", **echo},
            timeout=30,
        ) as response,
    ):
        for piece in response.iter_raw():
            received += piece
    assert b"content_block_start" in received  # the stream did run up to the cut
    assert head.encode() not in received
    call = proxy.calls(at_least=calls.before + 1)[calls.before]
    assert call["outcome"] == "upstream_cut"
    pack = PackReader.open(proxy.run_dir)
    assert head.encode() not in pack.get(call["response_hash"])


def test_replay_serves_the_redacted_recording(
    vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("echo-replay")
    live = start_live_proxy(tmp, vendor, cap="5")

    def exchange(proxy: ProxyProcess) -> list[str]:
        echo = _echo("echo_key=events")
        with proxy.anthropic().messages.stream(
            model=HAIKU, max_tokens=20, messages=USER, extra_headers=echo
        ) as stream:
            streamed = "".join(stream.text_stream)
        reply = proxy.openai().chat.completions.create(
            model=MINI, max_tokens=20, messages=CHAT, extra_headers=_echo("echo_key=text")
        )
        return [streamed, reply.choices[0].message.content or ""]

    try:
        recorded = exchange(live)
        live.calls(at_least=2)
    finally:
        assert live.stop() == 0
    assert all("[redacted:" in text for text in recorded)
    replay = ProxyProcess(
        tmp / "replay",
        "--mode",
        "replay",
        "--replay-from",
        str(live.run_dir),
        env={"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""},
    )
    try:
        replayed = exchange(replay)
        calls = replay.calls(at_least=2)
    finally:
        assert replay.stop() == 0
    assert replayed == recorded
    assert {c["outcome"] for c in calls} == {"ok"}


def test_a_body_that_cannot_be_decoded_is_not_relayed(proxy: ProxyProcess) -> None:
    """Labelled gzip but not gzip: the proxy cannot see whether a key is in it, so the arm gets
    the vendor's 502 shape (plain) or a broken stream, and the call says why."""
    calls = Calls(proxy)
    echo = _echo("echo_key=text;encode=corrupt")
    with pytest.raises(openai.InternalServerError) as plain:
        proxy.openai().chat.completions.create(
            model=MINI, max_tokens=20, messages=CHAT, extra_headers=echo
        )
    assert "could not decode" in str(plain.value)
    with (
        pytest.raises((anthropic.APIConnectionError, httpx2.RemoteProtocolError)),
        _anthropic(proxy).messages.stream(
            model=HAIKU, max_tokens=20, messages=USER, extra_headers=echo
        ) as stream,
    ):
        "".join(stream.text_stream)
    logged = proxy.calls(at_least=calls.before + 2)[calls.before :]
    assert all("undecodable_body" in c["flags"] for c in logged), logged
    assert [c["status"] for c in logged] == [502, 200]
    assert logged[1]["outcome"] == "upstream_cut"
    assert _leaks("calls.jsonl", (proxy.run_dir / "calls.jsonl").read_bytes()) == []


def test_a_stream_event_nested_too_deep_to_read_is_not_relayed(proxy: ProxyProcess) -> None:
    """JSON nested deeper than a parser goes: the proxy cannot read its texts to check them for
    a split key, so it treats the stream as one it cannot decode (a broken stream for the arm),
    rather than failing inside the relay."""
    calls = Calls(proxy)
    echo = _echo("echo_key=nested")
    with (
        pytest.raises((openai.APIConnectionError, httpx2.RemoteProtocolError)),
        proxy.openai().chat.completions.create(
            model=MINI, max_tokens=20, messages=CHAT, stream=True, extra_headers=echo
        ) as stream,
    ):
        for _ in stream:
            pass
    (logged,) = proxy.calls(at_least=calls.before + 1)[calls.before :]
    assert "undecodable_body" in logged["flags"] and logged["outcome"] == "upstream_cut"
    assert _leaks("calls.jsonl", (proxy.run_dir / "calls.jsonl").read_bytes()) == []
