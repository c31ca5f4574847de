"""`model_served` in the call log is the model the vendor's reply names (it may differ from the
one requested: an alias resolved to a dated id), in live mode for every route and framing, and in
record mode from the stub's reply."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5"
SERVED = "claude-haiku-4-5-20251001"
MINI = "gpt-4.1-mini"
MINI_SERVED = "gpt-4.1-mini-2025-04-14"
USER: list[Any] = [{"role": "user", "content": "Name a lighthouse."}]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path_factory.mktemp("served"), vendor)
        yield proxy
        proxy.stop()


def _served(proxy: ProxyProcess, route: str, stream: bool) -> str | None:
    call = proxy.call_where(route=route, stream=stream, outcome="ok")
    served = call["model_served"]
    return served if isinstance(served, str) else None


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_live_anthropic_logs_the_model_the_reply_names(live: ProxyProcess, stream: bool) -> None:
    headers = {"x-fake-behaviour": f"served_model={SERVED}"}
    client = live.anthropic()
    if stream:
        with client.messages.stream(
            model=HAIKU, max_tokens=50, messages=USER, extra_headers=headers
        ) as s:
            s.get_final_message()
    else:
        client.messages.create(model=HAIKU, max_tokens=50, messages=USER, extra_headers=headers)
    assert _served(live, "anthropic.messages", stream) == SERVED


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_live_openai_logs_the_model_the_reply_names(
    live: ProxyProcess, api: str, stream: bool
) -> None:
    headers = {"x-fake-behaviour": f"served_model={MINI_SERVED}"}
    client = live.openai()
    reply: Any
    if api == "chat":
        reply = client.chat.completions.create(
            model=MINI, messages=USER, stream=stream, extra_headers=headers
        )
    else:
        reply = client.responses.create(
            model=MINI, input="Name a lighthouse.", stream=stream, extra_headers=headers
        )
    if stream:
        for _ in reply:
            pass
    assert _served(live, f"openai.{api}", stream) == MINI_SERVED


def _two_calls(proxy: ProxyProcess) -> dict[str, Any]:
    try:
        proxy.anthropic().messages.create(model=HAIKU, max_tokens=50, messages=USER)
        proxy.openai().chat.completions.create(model=MINI, messages=USER)
    finally:
        assert proxy.stop() == 0
    return {c["route"]: c["model_served"] for c in proxy.calls()}


def test_record_and_replay_modes_log_the_model_served(tmp_path: Path) -> None:
    recorded = ProxyProcess(tmp_path / "record")
    assert _two_calls(recorded) == {"anthropic.messages": HAIKU, "openai.chat": MINI}
    replay = ProxyProcess(
        tmp_path / "replay", "--mode", "replay", "--replay-from", str(recorded.run_dir)
    )
    assert _two_calls(replay) == {"anthropic.messages": HAIKU, "openai.chat": MINI}
