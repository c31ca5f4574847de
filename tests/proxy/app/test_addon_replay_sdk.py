"""Replay misses read by the official SDKs, in process: the SDK's httpx2 transport hands each
request to the addons in mitmproxy's test kit (tests/proxy/addon_kit.py), so the SDK parses the
proxy's own bytes with no socket but the stream server's.

A miss is a 409: Anthropic's SDK raises ConflictError with the `conflict_error` type its API
sends for a 409, OpenAI's raises ConflictError with `invalid_request_error`; neither retries it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.proxy.addon_kit import HAIKU, AddonKit, addon_context

USER: Any = [{"role": "user", "content": "Remember that my sister lives in Lisbon."}]
OTHER: Any = [{"role": "user", "content": "A question the recording never saw."}]
MINI = "gpt-4.1-mini"


class KitTransport(httpx2.AsyncBaseTransport):
    """Sends each SDK request through every hook of the kit's addons, as a reverse listener."""

    def __init__(self, kit: AddonKit) -> None:
        self.kit = kit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        flow = self.kit.flow(
            request.url.path, body, method=request.method, headers=dict(request.headers)
        )
        await self.kit.send(flow)
        assert flow.response is not None
        framing = ("transfer-encoding", "content-length", "content-encoding")
        headers = [(k, v) for k, v in flow.response.headers.items() if k.lower() not in framing]
        return httpx2.Response(
            flow.response.status_code, headers=headers, content=flow.response.content
        )


def clients(kit: AddonKit) -> tuple[anthropic.AsyncAnthropic, openai.AsyncOpenAI]:
    # Retries allowed: the miss itself must tell the SDK not to retry it.
    return (
        anthropic.AsyncAnthropic(
            api_key="x",
            base_url="http://127.0.0.1/anthropic",
            max_retries=2,
            http_client=httpx2.AsyncClient(transport=KitTransport(kit)),
        ),
        openai.AsyncOpenAI(
            api_key="x",
            base_url="http://127.0.0.1/openai/v1",
            max_retries=2,
            http_client=httpx2.AsyncClient(transport=KitTransport(kit)),
        ),
    )


@pytest.fixture
async def source(tmp_path: Path) -> Path:
    run = tmp_path / "source"
    async with addon_context(run) as kit:
        ant, oai = clients(kit)
        await ant.messages.create(model=HAIKU, max_tokens=64, messages=USER)
        await oai.chat.completions.create(model=MINI, messages=USER)
        await ant.close()
        await oai.close()
    return run


@pytest.mark.parametrize("stream", [False, True])
async def test_a_miss_is_each_sdks_conflict_error_with_its_vendors_type(
    source: Path, tmp_path: Path, stream: bool
) -> None:
    async with addon_context(
        tmp_path / "replay", harness_mode="replay", harness_replay_from=str(source)
    ) as kit:
        ant, oai = clients(kit)
        served = await ant.messages.create(model=HAIKU, max_tokens=64, messages=USER)
        with pytest.raises(anthropic.ConflictError) as ant_miss:
            await ant.messages.create(model=HAIKU, max_tokens=64, messages=OTHER, stream=stream)
        await oai.chat.completions.create(model=MINI, messages=USER)
        with pytest.raises(openai.ConflictError) as oai_miss:
            await oai.chat.completions.create(model=MINI, messages=OTHER, stream=stream)
        await ant.close()
        await oai.close()
    assert served.content[0].type == "text"  # the recorded request still gets its reply
    assert type(ant_miss.value) is anthropic.ConflictError
    assert ant_miss.value.type == "conflict_error"
    assert "no recorded response" in (ant_miss.value.api_message or "")
    assert type(oai_miss.value) is openai.ConflictError
    assert (oai_miss.value.type, oai_miss.value.code) == ("invalid_request_error", None)
    assert "no recorded response" in oai_miss.value.message
    calls = sorted(kit.calls(), key=lambda c: c["seq"])
    # Each miss sent and logged once: x-should-retry stopped both SDKs' retries.
    assert [(c["vendor"], c["outcome"], c["status"]) for c in calls] == [
        ("anthropic", "ok", 200),
        ("anthropic", "replay_miss", 409),
        ("openai", "ok", 200),
        ("openai", "replay_miss", 409),
    ]
