"""The orchestrator's end of the control channel, against the proxy's real control addon: each
turn it names is the one the proxy charges calls to, and a channel that fails stops the run."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness.isolation.base import InfraError
from harness.isolation.ports import free_port
from harness.run.proxy_control import ProxyControl
from proxy.flow.control import TurnRef
from tests.proxy.addon_kit import addon_context

CHAT = "/openai/v1/chat/completions"
BODY = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}


async def test_calls_are_charged_to_the_turn_it_named_and_to_none_between_turns(
    tmp_path: Path,
) -> None:
    port = free_port()
    control = ProxyControl(f"http://127.0.0.1:{port}")
    try:
        async with addon_context(tmp_path, harness_control_port=port) as kit:
            await control.tell("default", "i1", 2)
            _, _, sent = await kit.call(CHAT, BODY)
            assert sent.metadata["harness"].turn == TurnRef("i1", 2)
            await control.tell("default", None, 0)  # the arm is between turns
            await kit.call(CHAT, BODY)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as reader:
                assert (await reader.get("/turn")).json() == {}
    finally:
        await control.aclose()
    assert [(c["item"], c["turn"]) for c in kit.calls()] == [("i1", 2), (None, None)]


async def test_an_endpoint_that_is_not_there_is_an_infrastructure_failure() -> None:
    control = ProxyControl(f"http://127.0.0.1:{free_port()}")
    try:
        with pytest.raises(InfraError, match="the proxy's control endpoint failed"):
            await control.tell("a", "i1", 0)
    finally:
        await control.aclose()


async def test_a_refused_message_is_an_infrastructure_failure(tmp_path: Path) -> None:
    port = free_port()
    # The real endpoint, asked on a path it does not serve: it answers 400.
    control = ProxyControl(f"http://127.0.0.1:{port}/elsewhere")
    try:
        async with addon_context(tmp_path, harness_control_port=port):
            with pytest.raises(InfraError, match="400 Bad Request"):
                await control.tell("a", "i1", 0)
    finally:
        await control.aclose()
