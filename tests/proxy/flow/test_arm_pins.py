"""Pins from a reference arm (proxy/flow/arm_pins.py): `[pins] from_arm = "B"` pins the sampling
fields of B's captured main request of an item and turn on the other arms' main requests of that
turn, in record and live mode alike; other purposes, other turns and B itself are left alone; a
turn B never asked in is flagged, not silently pinned from another turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proxy.app.addon import HarnessAddon
from proxy.flow.arm_pins import MISSING_FLAG, UNREADABLE_FLAG, ReferenceBook, sampling_of
from proxy.flow.callstate import CallState
from proxy.flow.control import TurnRef
from rundir.calls.calllog import Rewrite
from rundir.calls.rewrites import as_sent
from tests.fakevendor.server import FakeVendor
from tests.proxy.addon_kit import AddonKit, addon_context
from tests.proxy.live_helpers import STUDY_KEYS, live_options
from vendors.pins import Pins
from vendors.routes import find_route

CHAT = "/openai/v1/chat/completions"
PORTS = {"B": 8091, "C0": 8092, "C1": 8093}
PINS = '[pins]\nfrom_arm = "B"\nseed = 7\n'


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture(autouse=True)
def study_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in STUDY_KEYS.items():
        monkeypatch.setenv(name, key)


# --- reading a request's sampling fields ---------------------------------------------------------


def test_sampling_fields_are_read_per_route_into_pins_fields() -> None:
    claude = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 3000,
        "temperature": 1,
        "thinking": {"type": "enabled", "budget_tokens": 2048, "display": "summarized"},
        "output_config": {"effort": "low", "format": {"type": "text"}},
        "messages": [],
    }
    assert sampling_of("anthropic.messages", claude) == {
        "max_tokens": 3000,
        "temperature": 1,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "effort": "low",
    }
    chat = ask("x", max_tokens=10, max_completion_tokens=20, seed=3, top_p=0.5)
    assert sampling_of("openai.chat", chat) == {"max_tokens": 20, "seed": 3, "top_p": 0.5}
    responses = {"model": "o3", "input": "x", "reasoning": {"effort": "high"}, "text": {}}
    assert sampling_of("openai.responses", responses) == {"reasoning_effort": "high"}
    assert sampling_of("openai.embeddings", {"model": "m", "input": "x"}) == {}


def _state(arm: str, body: dict[str, Any], item: str = "i1", turn: int = 1) -> CallState:
    state = CallState("openai", "/v1/chat/completions", "POST", arm, "main", 0.0, seq=5)
    state.route = find_route("openai", "POST", "/v1/chat/completions")
    state.body = body
    state.turn = TurnRef(item, turn)
    return state


def test_a_value_the_pins_cannot_hold_is_flagged_and_the_study_pins_stand() -> None:
    book, pins = ReferenceBook(), Pins(from_arm="B")
    book.capture(_state("B", ask("x", reasoning_effort="ultra")), pins)
    follower = _state("C0", ask("x"))
    assert book.pins_for(follower, pins) is pins
    assert follower.flags == [UNREADABLE_FLAG]


def test_only_the_first_main_request_of_the_turn_is_captured() -> None:
    book, pins = ReferenceBook(), Pins(from_arm="B")
    book.capture(_state("B", ask("x", temperature=0.2)), pins)
    book.capture(_state("B", ask("x", temperature=0.9)), pins)  # B's second call of the turn
    follower = _state("C0", ask("x"))
    assert book.pins_for(follower, pins).temperature == 0.2
    assert follower.flags == ["pins_from=B#5"]


# --- through the addon, record and live ---------------------------------------------------------


def _turn(kit: AddonKit, item: str, turn: int) -> None:
    (addon,) = [a for a in kit.addons if isinstance(a, HarnessAddon)]
    for arm in PORTS:
        addon.turns.set(arm, TurnRef(item, turn))


async def _send(kit: AddonKit, arm: str, body: dict[str, Any], **headers: str) -> None:
    flow = await kit.send(kit.flow(CHAT, body, port=PORTS[arm], headers=headers))
    assert flow.response is not None and flow.response.status_code == 200


async def _scenario(kit: AddonKit) -> None:
    _turn(kit, "i1", 1)
    await _send(kit, "B", ask("hi", temperature=0.3, top_p=0.8, max_tokens=700))
    await _send(kit, "C0", ask("hi", temperature=1.0))
    await _send(kit, "C1", ask("hi", temperature=1.0, top_p=0.1), **{"X-Harness-Purpose": "memory"})
    _turn(kit, "i1", 2)
    await _send(kit, "C1", ask("hi", temperature=1.0))  # B has not asked in turn 2 yet


def _check(calls: list[dict[str, Any]]) -> dict[str, Any]:
    b, c0, memory, early = calls
    assert b["arm"] == "B" and not any(f.startswith("pins_from") for f in b["flags"])
    assert {r["field"] for r in b["rewrites"]} == {"seed"}  # the study's pin only
    assert f"pins_from=B#{b['seq']}" in c0["flags"]
    sent = as_sent({"temperature": 1.0}, [Rewrite(**r) for r in c0["rewrites"]])
    # B's fields laid over the study's pins: temperature, top_p and B's output limit, and seed.
    assert sent == {"temperature": 0.3, "top_p": 0.8, "max_completion_tokens": 700, "seed": 7}
    assert memory["purpose"] == "memory" and memory["rewrites"] == []
    assert not any(f.startswith("pins_from") for f in memory["flags"])
    assert MISSING_FLAG in early["flags"] and early["turn"] == 2
    return c0


def _options(tmp_path: Path) -> dict[str, Any]:
    pins = tmp_path / "study.toml"
    pins.write_text(PINS)
    ports = [f"{port}={arm}" for arm, port in PORTS.items()]
    return {"harness_arm_ports": ports, "harness_pins": str(pins)}


async def test_record_mode_pins_the_followers_from_bs_request(tmp_path: Path) -> None:
    async with addon_context(tmp_path / "run", **_options(tmp_path)) as kit:
        await _scenario(kit)
    _check(kit.calls())


async def test_live_mode_forwards_the_followers_pinned_from_b(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    vendor.reset()
    options = {**_options(tmp_path), **live_options(tmp_path, vendor)}
    async with addon_context(tmp_path / "run", **options) as kit:
        await _scenario(kit)
    _check(kit.calls())
    forwarded = vendor.requests[1].body  # C0's main call as the vendor received it
    assert (forwarded["temperature"], forwarded["top_p"], forwarded["seed"]) == (0.3, 0.8, 7)
    assert forwarded["max_completion_tokens"] == 700 and "max_tokens" not in forwarded
