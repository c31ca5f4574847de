"""proxy.live.read_coalesce: a streamed reply's HTTP chunks that the proxy reads at once are relayed
and metered as one piece, and every byte, the usage and the key guard are as they were.

The upstream here is a raw socket that writes the whole SSE body, one HTTP chunk per event, in
a single send after the head: what a fast vendor's burst looks like to the proxy."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.proxy.live_helpers import STUDY_KEYS, STUDY_OPENAI_KEY
from tests.proxy.proxy_process import ProxyProcess

MODEL = "gpt-4.1-mini"
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _event(choices: list[dict], usage: dict | None = None) -> bytes:  # type: ignore[type-arg]
    body: dict = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": MODEL}  # type: ignore[type-arg]
    body["choices"] = choices
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _delta(text: str) -> bytes:
    return _event([{"index": 0, "delta": {"content": text}, "finish_reason": None}])


def sse_events(texts: list[str]) -> list[bytes]:
    usage = {"prompt_tokens": 11, "completion_tokens": 23, "total_tokens": 34}
    return [
        _event([{"index": 0, "delta": {"role": "assistant", "content": ""}}]),
        *(_delta(t) for t in texts),
        _event([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        _event([], usage),
        b"data: [DONE]\n\n",
    ]


def http_chunks(events: list[bytes], split: int = 0) -> bytes:
    """Each event one HTTP chunk; with `split`, each event cut into two chunks at that byte."""
    out = b""
    for event in events:
        pieces = [event[:split], event[split:]] if 0 < split < len(event) else [event]
        out += b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)
    return out + b"0\r\n\r\n"


class BurstUpstream:
    """Answers every request with HEAD, a pause (the proxy has set up its tap), then `body` in
    one sendall."""

    def __init__(self) -> None:
        self.body = b""
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(HEAD)
            time.sleep(0.2)
            conn.sendall(self.body)
            time.sleep(0.5)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def upstream() -> Iterator[BurstUpstream]:
    server = BurstUpstream()
    yield server
    server.close()


@pytest.fixture(scope="module")
def proxy(
    upstream: BurstUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProxyProcess]:
    tmp: Path = tmp_path_factory.mktemp("coalesce")
    url = f"http://127.0.0.1:{upstream.port}"
    process = ProxyProcess(
        tmp / "run",
        *("--mode", "live", "--cap", "5", "--ledger", str(tmp / "ledger.jsonl")),
        *("--upstream", f"openai={url}", "--upstream", f"anthropic={url}", "--deadline", "30"),
        env=STUDY_KEYS,
    )
    yield process
    process.stop()


def _stream(proxy: ProxyProcess, tag: str) -> str:
    chunks = list(
        proxy.openai().chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": tag}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 23
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _call(proxy: ProxyProcess, before: int) -> dict:  # type: ignore[type-arg]
    """The call made after `before` calls were logged (pytest-xdist may give each worker its own
    proxy, so a test's call is not at a fixed line)."""
    return proxy.calls(at_least=before + 1)[before]


def test_a_burst_of_chunks_is_relayed_whole_in_fewer_pieces_and_metered(
    upstream: BurstUpstream, proxy: ProxyProcess
) -> None:
    texts = [f"word{i} " for i in range(40)]
    events = sse_events(texts)
    upstream.body = http_chunks(events)
    before = len(proxy.calls())
    assert _stream(proxy, "burst") == "".join(texts)
    call = _call(proxy, before)
    assert call["outcome"] == "ok" and call["tokens"]["source"] == "vendor"
    assert call["tokens"]["output"] == 23 and call["tokens"]["input"] == 11
    # 44 HTTP chunks in one read went out as far fewer pieces, and every byte of them.
    assert len(call["response_chunks"]) < len(events) // 4, call["response_chunks"]
    assert sum(call["response_chunks"]) == sum(len(e) for e in events)


def test_a_key_split_across_chunks_and_events_of_one_read_is_still_redacted(
    upstream: BurstUpstream, proxy: ProxyProcess
) -> None:
    # The key in three text deltas, every event also cut in two HTTP chunks mid-JSON.
    key = STUDY_OPENAI_KEY
    texts = ["Your key is ", key[:6], key[6:15], key[15:], " thanks"]
    upstream.body = http_chunks(sse_events(texts), split=17)
    before = len(proxy.calls())
    text = _stream(proxy, "echo")
    assert key not in text and key[6:] not in text
    assert "[redacted:OPENAI_API_KEY]" in text
    call = _call(proxy, before)
    assert "secret_redacted" in call["flags"] and call["tokens"]["output"] == 23


def test_a_burst_that_ends_without_the_terminal_event_still_breaks_the_arm(
    upstream: BurstUpstream, proxy: ProxyProcess
) -> None:
    events = sse_events(["cut ", "short"])[:-2]  # no usage chunk, no [DONE]
    upstream.body = http_chunks(events)
    before = len(proxy.calls())
    with pytest.raises(openai.APIError):
        _stream(proxy, "cut")
    call = _call(proxy, before)
    assert call["outcome"] == "upstream_cut", call
