"""The orchestrator's end of the control channel, against the proxy's real control addon: each
turn it names is the one the proxy charges calls to, and a channel that fails stops the run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from harness.isolation.base import InfraError
from harness.isolation.ports import free_port
from harness.run.control.proxy_control import ProxyControl
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


def no_ca_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a CA store (what httpx does for a client given no TLS context) fails the test."""
    import ssl

    import certifi

    def loaded(*args: object, **kwargs: object) -> None:
        raise AssertionError("a plain-HTTP client built a TLS context with a CA store")

    monkeypatch.setattr(certifi, "where", loaded)
    monkeypatch.setattr(ssl, "create_default_context", loaded)


async def test_the_channel_builds_no_tls_context_and_still_tells_and_guards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The channel is plain HTTP: neither the client nor the guard's per-turn one loads a CA
    store (~25 ms of CPU each), and both still reach the proxy."""
    no_ca_store(monkeypatch)
    port = free_port()
    control = ProxyControl(f"http://127.0.0.1:{port}")
    try:
        async with addon_context(tmp_path, harness_control_port=port) as kit:
            await control.tell("default", "i1", 1)
            await asyncio.to_thread(control.guard, "default", "i1", 1)
            _, _, sent = await kit.call(CHAT, BODY)
            assert sent.metadata["harness"].turn == TurnRef("i1", 1, phase="guard")
            await asyncio.to_thread(control.guard, "default", None, 0)
            await control.tell("default", None, 0)
    finally:
        await control.aclose()
    [call] = kit.calls()
    assert (call["item"], call["turn"], call["purpose"]) == ("i1", 1, "guard"), call
