"""The study's vendor keys stay inside the proxy: they reach the vendor and nothing else.

The keys live only in the proxy's environment. A test greps for them everywhere a run leaves a
trace (call log, bodies, run header, reservation journal, ledger, the proxy's logs and exports)
and in everything an arm receives (status, headers, bodies, as raw bytes and through the official
SDKs), across plain, streamed, vendor-error and refused calls. The arm's own (placeholder) key,
for its part, never reaches the vendor.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anthropic
import httpx
import httpx2
import openai
import pytest
import zstandard
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import STUDY_ANTHROPIC_KEY, STUDY_OPENAI_KEY, start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
MINI = "gpt-4.1-mini"
PROMPT = "Tell me about lighthouses."
USER: list[MessageParam] = [{"role": "user", "content": PROMPT}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": PROMPT}]
ARM_KEY = "arm-placeholder-KEY-5e5e5e"
# The keys, and distinctive pieces of them: a leak of part of a key is still a leak.
SECRETS = [
    STUDY_ANTHROPIC_KEY,
    STUDY_OPENAI_KEY,
    STUDY_ANTHROPIC_KEY[-16:],
    STUDY_OPENAI_KEY[-16:],
]
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# A cap this small refuses a call that asks for many output tokens, and admits small ones.
CAP = "0.05"


@dataclass
class Seen:
    """Everything the arm received, as bytes, with a label per call for failure messages."""

    received: list[tuple[str, bytes]] = field(default_factory=list)

    def add(self, label: str, data: bytes | str) -> None:
        self.received.append((label, data.encode() if isinstance(data, str) else data))

    def add_response(self, label: str, response: httpx.Response | httpx2.Response) -> None:
        head = f"{response.status_code}\n" + "".join(
            f"{k}: {v}\n" for k, v in response.headers.multi_items()
        )
        self.add(label, head.encode() + response.content)


@dataclass
class Run:
    proxy: ProxyProcess
    vendor: FakeVendor
    seen: Seen
    stdout: bytes


def _anthropic_raw(proxy: ProxyProcess, body: dict[str, object]) -> httpx.Response:
    return httpx.post(
        f"{proxy.anthropic_base}/v1/messages",
        json=body,
        headers={"x-api-key": ARM_KEY, "anthropic-version": "2023-06-01"},
        timeout=30,
    )


def _openai_raw(proxy: ProxyProcess, body: dict[str, object]) -> httpx.Response:
    return httpx.post(
        f"{proxy.openai_base}/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {ARM_KEY}"},
        timeout=30,
    )


def _exercise(proxy: ProxyProcess, seen: Seen) -> None:
    """Plain, streamed and refused calls of both vendors, raw and through the SDKs."""
    small = {"model": HAIKU, "max_tokens": 50, "messages": USER}
    greedy = {"model": HAIKU, "max_tokens": 20000, "messages": USER}  # past the cap
    seen.add_response("anthropic plain", _anthropic_raw(proxy, small))
    seen.add_response("anthropic stream", _anthropic_raw(proxy, {**small, "stream": True}))
    seen.add_response("anthropic refused", _anthropic_raw(proxy, greedy))
    chat = {"model": MINI, "max_tokens": 50, "messages": CHAT}
    seen.add_response("openai plain", _openai_raw(proxy, chat))
    seen.add_response("openai stream", _openai_raw(proxy, {**chat, "stream": True}))
    seen.add_response("openai refused", _openai_raw(proxy, {**chat, "max_tokens": 32768}))
    seen.add_response("openai unknown model", _openai_raw(proxy, {**chat, "model": "gpt-x"}))

    ant = anthropic.Anthropic(base_url=proxy.anthropic_base, api_key=ARM_KEY, max_retries=0)
    oai = openai.OpenAI(base_url=proxy.openai_base, api_key=ARM_KEY, max_retries=0)
    with ant, oai:
        raw = ant.messages.with_raw_response.create(model=HAIKU, max_tokens=50, messages=USER)
        seen.add_response("sdk anthropic plain", raw.http_response)
        seen.add("sdk anthropic plain parsed", raw.parse().model_dump_json())
        with ant.messages.stream(model=HAIKU, max_tokens=50, messages=USER) as stream:
            for event in stream:
                seen.add("sdk anthropic stream", event.model_dump_json())
        for chunk in oai.chat.completions.create(
            model=MINI,
            max_tokens=50,
            messages=CHAT,
            stream=True,
        ):
            seen.add("sdk openai stream", chunk.model_dump_json())
        for label, call in [
            (
                "sdk anthropic error",
                lambda: ant.messages.create(model=HAIKU, max_tokens=20000, messages=USER),
            ),
            (
                "sdk openai error",
                lambda: oai.chat.completions.create(model=MINI, max_tokens=32768, messages=CHAT),
            ),
        ]:
            try:
                call()
            except (anthropic.APIStatusError, openai.APIStatusError) as e:
                seen.add(label, f"{e}\n{e.body!r}")
                seen.add_response(label, e.response)
            else:
                raise AssertionError(f"{label}: the call should have failed")


def _stop(proxy: ProxyProcess) -> bytes:
    """Stop the proxy as a user does (Ctrl-C) and keep everything it printed to stdout."""
    proxy.proc.send_signal(signal.SIGINT)
    assert proxy.proc.stdout is not None
    out = proxy.proc.stdout.read()
    proxy.proc.wait(30)
    assert proxy.stop() == 0
    return out


def _no_output_cap(tmp: Path) -> list[str]:
    """The refused calls ask for more output than the cap covers; the default 6,000-token
    output cap would make them small enough to pass, so it is off here."""
    pins = tmp / "pins.toml"
    pins.write_text("[pins]\noutput_cap = 0\n")
    return ["--pins", str(pins)]


@pytest.fixture(scope="module")
def ok_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """A proxy in front of a vendor that accepts only the study's keys."""
    tmp = tmp_path_factory.mktemp("secrets")
    keys = {"anthropic": STUDY_ANTHROPIC_KEY, "openai": STUDY_OPENAI_KEY}
    with FakeVendor(api_keys=keys) as vendor:
        proxy = start_live_proxy(tmp, vendor, *_no_output_cap(tmp), cap=CAP)
        seen = Seen()
        try:
            _exercise(proxy, seen)
        finally:
            stdout = _stop(proxy)
        yield Run(proxy, vendor, seen, stdout)


@pytest.fixture(scope="module")
def rejected_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """A proxy in front of a vendor that knows other keys: every forwarded call gets its 401."""
    tmp = tmp_path_factory.mktemp("secrets401")
    keys = {"anthropic": "sk-ant-some-other-key", "openai": "sk-some-other-key"}
    with FakeVendor(api_keys=keys) as vendor:
        proxy = start_live_proxy(tmp, vendor, cap=CAP)
        seen = Seen()
        try:
            small = {"model": HAIKU, "max_tokens": 50, "messages": USER}
            chat = {"model": MINI, "max_tokens": 50, "messages": CHAT}
            for label, response in [
                ("anthropic 401", _anthropic_raw(proxy, small)),
                ("anthropic 401 stream", _anthropic_raw(proxy, {**small, "stream": True})),
                ("openai 401", _openai_raw(proxy, chat)),
                ("openai 401 stream", _openai_raw(proxy, {**chat, "stream": True})),
            ]:
                assert response.status_code == 401, (label, response.text)
                seen.add_response(label, response)
            with openai.OpenAI(base_url=proxy.openai_base, api_key=ARM_KEY, max_retries=0) as oai:
                with pytest.raises(openai.AuthenticationError) as err:
                    oai.chat.completions.create(model=MINI, max_tokens=50, messages=CHAT)
                seen.add("sdk openai 401", f"{err.value}\n{err.value.body!r}")
                seen.add_response("sdk openai 401", err.value.response)
        finally:
            stdout = _stop(proxy)
        yield Run(proxy, vendor, seen, stdout)


def _zstd_frames(data: bytes) -> list[bytes]:
    """Every zstd frame found in a file (a body store keeps bodies compressed)."""
    frames = []
    start = data.find(ZSTD_MAGIC)
    while start >= 0:
        with contextlib.suppress(zstandard.ZstdError):  # the magic bytes inside other data
            frames.append(zstandard.ZstdDecompressor().decompressobj().decompress(data[start:]))
        start = data.find(ZSTD_MAGIC, start + 1)
    return frames


def _traces(run: Run) -> list[tuple[str, bytes]]:
    """Every file the run left (bodies decompressed), the ledger, the proxy's logs and output."""
    proxy = run.proxy
    files = [p for p in proxy.run_dir.rglob("*") if p.is_file()]
    ledger_dir = proxy.run_dir.parent
    files += [p for p in ledger_dir.glob("ledger.jsonl*") if p.is_file()]
    files.append(proxy.stderr_path)
    traces: list[tuple[str, bytes]] = []
    for path in files:
        data = path.read_bytes()
        traces.append((str(path), data))
        traces += [(f"{path} (decompressed)", frame) for frame in _zstd_frames(data)]
    traces.append(("stdout", run.stdout))
    traces.append(("exports", "\n".join(f"{k}={v}" for k, v in proxy.exports.items()).encode()))
    return traces


def _leaks(items: list[tuple[str, bytes]]) -> list[str]:
    return [
        f"{secret!r} in {label}"
        for label, data in items
        for secret in SECRETS
        if secret.encode() in data
    ]


@pytest.mark.parametrize("which", ["ok_run", "rejected_run"])
def test_study_keys_appear_in_no_file_log_or_output(
    which: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(which)
    traces = _traces(run)
    names = {Path(label).name for label, _ in traces}
    # The places a user would look: each must exist and hold something.
    assert {"calls.jsonl", "run.json", "reservations.jsonl", "ledger.jsonl"} <= names
    # The bodies were really read: the prompt is in one of them once decompressed.
    assert any("decompressed" in label and b"lighthouses" in data for label, data in traces), (
        "no stored body was found and decompressed"
    )
    assert run.proxy.stderr_path.stat().st_size > 0
    assert _leaks(traces) == []


@pytest.mark.parametrize("which", ["ok_run", "rejected_run"])
def test_study_keys_appear_in_nothing_the_arm_receives(
    which: str, request: pytest.FixtureRequest
) -> None:
    run: Run = request.getfixturevalue(which)
    assert len(run.seen.received) >= 5
    assert _leaks(run.seen.received) == []


def test_the_arm_saw_each_kind_of_call(ok_run: Run) -> None:
    """The grep above covered successes, streams and refusals, not only errors."""
    labels = dict(ok_run.seen.received)
    assert labels["anthropic plain"].startswith(b"200")
    assert (
        labels["anthropic stream"].startswith(b"200")
        and b"message_stop" in labels["anthropic stream"]
    )
    assert labels["openai stream"].startswith(b"200") and b"[DONE]" in labels["openai stream"]
    assert labels["anthropic refused"].startswith(b"402")
    assert labels["openai refused"].startswith(b"429")


def test_vendor_gets_the_study_key_and_never_the_arms(ok_run: Run, rejected_run: Run) -> None:
    ok, rejected = ok_run.vendor.requests, rejected_run.vendor.requests
    assert len(ok) >= 6 and len(rejected) >= 5
    for received in [*ok, *rejected]:
        vendor = "anthropic" if received.path.endswith("/messages") else "openai"
        expected = STUDY_ANTHROPIC_KEY if vendor == "anthropic" else STUDY_OPENAI_KEY
        assert received.api_key == expected, received.path
        sent = "".join(f"{k}: {v}\n" for k, v in received.raw_headers).encode()
        assert ARM_KEY.encode() not in sent + received.raw_body
        assert b"placeholder" not in sent.lower()
    # Each vendor's key went only to that vendor, in that vendor's header.
    for received in ok:
        headers = received.headers
        if received.path.endswith("/messages"):
            assert "authorization" not in headers
        else:
            assert "x-api-key" not in headers
