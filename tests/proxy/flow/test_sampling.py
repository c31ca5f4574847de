"""The sampling rewrite: pins applied model-aware, every change recorded, and every rewritten
body accepted by the record-mode stubs (which refuse what the vendors refuse)."""

from __future__ import annotations

import copy
import itertools
import tomllib
from typing import Any

import pytest
from anthropic._data import MODELS_TO_WARN_WITH_THINKING_ENABLED

from proxy.flow.callstate import CallState
from proxy.flow.sampling import (
    PinConflict,
    _Editor,
    pin_call,
    prefers_adaptive,
    rewrite_sampling,
)
from rundir.calls.calllog import Rewrite
from stubs.anthropic.messages import messages
from stubs.openai.chat import chat_completions
from stubs.openai.responses import responses
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from tests.stubs.sdk_transport import body_digest
from vendors.errors import VendorRequestError
from vendors.hosts import Vendor
from vendors.pins import Pins, PinsError
from vendors.reply import VendorReply
from vendors.routes import find_route

USER = [{"role": "user", "content": "Where does my sister live?"}]
ENABLED = {"type": "enabled", "budget_tokens": 2048}


def claude(**fields: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 4096, "messages": USER, **fields}


def chat(model: str, **fields: Any) -> dict[str, Any]:
    return {"model": model, "messages": USER, **fields}


def resp(model: str, **fields: Any) -> dict[str, Any]:
    return {"model": model, "input": "Where does my sister live?", **fields}


_HANDLERS = {
    "anthropic.messages": ("anthropic", messages),
    "openai.chat": ("openai", chat_completions),
    "openai.responses": ("openai", responses),
}


def stub_answer(route: str, body: dict[str, Any]) -> VendorReply:
    """The record-mode stub's answer; raises VendorRequestError where the vendor would refuse."""
    vendor, handler = _HANDLERS[route]
    v: Vendor = "anthropic" if vendor == "anthropic" else "openai"
    req = StubRequest(vendor=v, route=route, body=body, digest=body_digest(body))
    return handler(req, StubContext())


def rewrite(route: str, body: dict[str, Any], pins: Pins, purpose: str = "main") -> list[Rewrite]:
    return rewrite_sampling(route, body["model"], body, purpose, pins)


def changes(rewrites: list[Rewrite]) -> dict[str, tuple[object, object]]:
    return {r.field: (r.before, r.after) for r in rewrites}


# --- Pins ---------------------------------------------------------------------------------------


def test_pins_from_toml_table() -> None:
    table = tomllib.loads(
        """
        temperature = 0.2
        max_tokens = 4096
        effort = "high"
        reasoning_effort = "low"
        seed = 7
        purposes = ["main", "utility"]
        thinking = { type = "enabled", budget_tokens = 2048 }
        """
    )
    pins = Pins.from_toml_table(table)
    assert pins.temperature == 0.2 and pins.seed == 7
    assert pins.thinking is not None and pins.thinking.model_dump() == ENABLED
    assert pins.purposes == ["main", "utility"]
    assert Pins().purposes == ["main"]


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"temprature": 0.2}, "pins.temprature"),
        ({"temperature": 3}, "pins.temperature"),
        ({"effort": "extreme"}, "pins.effort"),
        ({"thinking": {"type": "enabled", "budget_tokens": 512}}, "budget_tokens"),
        ({"thinking": {"type": "enabled"}}, "budget_tokens"),
        ({"thinking": {"type": "sometimes"}}, "pins.thinking"),
        ({"thinking": ENABLED, "max_tokens": 2048}, "raise max_tokens"),
    ],
)
def test_bad_pins_name_the_field(table: dict[str, Any], named: str) -> None:
    with pytest.raises(PinsError, match=named):
        Pins.from_toml_table(table)


# --- purposes and routes ------------------------------------------------------------------------


def test_other_purposes_are_never_touched() -> None:
    pins = Pins(temperature=0.2, top_k=1, max_tokens=100, thinking={"type": "adaptive"})
    body = claude(temperature=0.9, top_k=5)
    before = copy.deepcopy(body)
    assert rewrite("anthropic.messages", body, pins, purpose="embedding") == []
    assert body == before
    assert rewrite("anthropic.messages", body, Pins(temperature=0.2, purposes=["guard"])) == []
    assert body == before


def test_configured_purposes_are_rewritten() -> None:
    body = chat("gpt-4.1", temperature=0.9)
    out = rewrite("openai.chat", body, Pins(temperature=0.0, purposes=["utility"]), "utility")
    # The output cap comes with the pins: a pinned purpose with no limit of its own gets it.
    assert changes(out) == {"temperature": (0.9, 0.0), "max_completion_tokens": (None, 6000)}


# --- the output cap -----------------------------------------------------------------------------


def test_default_cap_lowers_a_larger_limit_and_sets_a_missing_one() -> None:
    assert Pins().output_cap == 6000
    big = claude(max_tokens=32000)
    assert changes(rewrite("anthropic.messages", big, Pins())) == {"max_tokens": (32000, 6000)}
    missing = resp("gpt-4.1")
    assert changes(rewrite("openai.responses", missing, Pins())) == {
        "max_output_tokens": (None, 6000)
    }
    legacy = chat("gpt-4.1", max_tokens=9000)  # the arm's own field is the one capped
    assert changes(rewrite("openai.chat", legacy, Pins())) == {"max_tokens": (9000, 6000)}


def test_cap_leaves_a_smaller_limit_and_other_purposes_alone() -> None:
    small = claude(max_tokens=100)
    assert rewrite("anthropic.messages", small, Pins()) == []
    memory = chat("gpt-4.1")
    assert rewrite("openai.chat", memory, Pins(), "memory") == []
    assert memory == chat("gpt-4.1")


def test_cap_off_and_a_max_tokens_pin_wins_over_it() -> None:
    assert rewrite("anthropic.messages", claude(max_tokens=32000), Pins(output_cap=0)) == []
    pinned = rewrite("anthropic.messages", claude(max_tokens=32000), Pins(max_tokens=8000))
    assert changes(pinned) == {"max_tokens": (32000, 8000)}


def test_cap_keeps_room_past_an_arms_thinking_budget() -> None:
    body = claude(
        model="claude-sonnet-4-5", max_tokens=20000, thinking=dict(ENABLED, budget_tokens=8000)
    )
    out = rewrite("anthropic.messages", body, Pins())
    assert changes(out) == {"max_tokens": (20000, 8001)}
    assert stub_answer("anthropic.messages", body).status == 200


def test_cap_is_in_the_pins_toml_and_refuses_a_negative() -> None:
    assert Pins.from_toml_table({"output_cap": 0}).output_cap == 0
    with pytest.raises(PinsError, match="output_cap"):
        Pins.from_toml_table({"output_cap": -1})


def test_unknown_route_is_a_no_op() -> None:
    body = {"model": "text-embedding-3-small", "input": "x"}
    assert rewrite_sampling("openai.embeddings", body["model"], body, "main", Pins(seed=1)) == []
    assert body == {"model": "text-embedding-3-small", "input": "x"}


# --- Anthropic ----------------------------------------------------------------------------------


def test_anthropic_without_thinking_takes_the_samplers() -> None:
    body = claude(temperature=0.9)
    out = rewrite("anthropic.messages", body, Pins(temperature=0.0, top_k=40, max_tokens=1000))
    assert changes(out) == {
        "max_tokens": (4096, 1000),
        "temperature": (0.9, 0.0),
        "top_k": (None, 40),
    }
    stub_answer("anthropic.messages", body)


def test_pinned_temperature_is_dropped_when_pinned_thinking_is_on() -> None:
    body = claude(temperature=0.7, top_k=5, top_p=0.5)
    out = rewrite("anthropic.messages", body, Pins(temperature=0.2, top_k=40, thinking=ENABLED))
    assert changes(out) == {
        "thinking": (None, ENABLED),
        "temperature": (0.7, None),
        "top_p": (0.5, None),
        "top_k": (5, None),
    }
    assert "temperature" not in body and "top_k" not in body and "top_p" not in body
    stub_answer("anthropic.messages", body)


def test_thinking_already_in_the_request_blocks_the_temperature_pin() -> None:
    body = claude(thinking={"type": "adaptive"})
    assert rewrite("anthropic.messages", body, Pins(temperature=0.2, top_p=0.5)) == []
    stub_answer("anthropic.messages", body)


def test_thinking_admits_temperature_one_and_a_high_top_p() -> None:
    body = claude(thinking=ENABLED)
    out = rewrite("anthropic.messages", body, Pins(temperature=1.0))
    assert changes(out) == {"temperature": (None, 1.0)}
    stub_answer("anthropic.messages", body)
    body = claude(thinking=ENABLED)
    assert changes(rewrite("anthropic.messages", body, Pins(top_p=0.97))) == {"top_p": (None, 0.97)}
    stub_answer("anthropic.messages", body)


def test_disabled_thinking_pin_lets_the_samplers_through() -> None:
    body = claude(thinking=ENABLED | {"display": "omitted"})
    out = rewrite("anthropic.messages", body, Pins(thinking={"type": "disabled"}, temperature=0.1))
    assert changes(out) == {
        "thinking": (ENABLED | {"display": "omitted"}, {"type": "disabled"}),
        "temperature": (None, 0.1),
    }
    stub_answer("anthropic.messages", body)


def test_thinking_pin_keeps_the_arms_display() -> None:
    body = claude(thinking={"type": "adaptive", "display": "omitted"})
    out = rewrite("anthropic.messages", body, Pins(thinking=ENABLED))
    assert body["thinking"] == ENABLED | {"display": "omitted"}
    assert len(out) == 1
    stub_answer("anthropic.messages", body)


def test_budget_not_below_max_tokens_is_a_pin_conflict() -> None:
    body = claude(max_tokens=1500)
    before = copy.deepcopy(body)
    with pytest.raises(PinConflict, match="pin max_tokens above") as err:
        rewrite("anthropic.messages", body, Pins(thinking=ENABLED, temperature=0.3))
    assert err.value.field == "max_tokens"
    assert body == before  # a refused call leaves the arm's body as it came
    # The pinned max_tokens is what the budget is checked against.
    body = claude(max_tokens=1500)
    rewrite("anthropic.messages", body, Pins(thinking=ENABLED, max_tokens=3000))
    stub_answer("anthropic.messages", body)
    with pytest.raises(PinConflict, match="budget_tokens"):
        rewrite("anthropic.messages", claude(thinking=ENABLED), Pins(max_tokens=2048))


def test_anthropic_temperature_above_one_is_a_pin_conflict() -> None:
    with pytest.raises(PinConflict, match=r"\[0, 1\]") as err:
        rewrite("anthropic.messages", claude(), Pins(temperature=1.5))
    assert err.value.field == "temperature"
    body = chat("gpt-4.1")
    rewrite("openai.chat", body, Pins(temperature=1.5))  # OpenAI's range goes to 2
    stub_answer("openai.chat", body)


def test_newer_claude_models_take_temperature_or_top_p_not_both() -> None:
    body = claude(top_p=0.8)
    out = rewrite("anthropic.messages", body, Pins(temperature=0.2))
    assert changes(out) == {"temperature": (None, 0.2), "top_p": (0.8, None)}
    with pytest.raises(PinConflict, match="not both"):
        rewrite("anthropic.messages", claude(), Pins(temperature=0.2, top_p=0.9))
    legacy = claude(model="claude-sonnet-4-20250514")
    rewrite("anthropic.messages", legacy, Pins(temperature=0.2, top_p=0.9))
    assert legacy["temperature"] == 0.2 and legacy["top_p"] == 0.9


def test_models_preferring_adaptive_get_adaptive_thinking() -> None:
    assert MODELS_TO_WARN_WITH_THINKING_ENABLED  # the SDK list the rule reads
    for model in MODELS_TO_WARN_WITH_THINKING_ENABLED:
        assert prefers_adaptive(model) and prefers_adaptive(model + "-20260301")
    assert not prefers_adaptive("claude-sonnet-4-6")
    body = claude(model="claude-opus-4-6")
    out = rewrite("anthropic.messages", body, Pins(thinking=ENABLED, temperature=0.2))
    assert changes(out) == {"thinking": (None, {"type": "adaptive"})}
    stub_answer("anthropic.messages", body)
    # The arm's own manual budget is converted as well, keeping its display.
    body = claude(model="claude-opus-4-6", thinking=ENABLED | {"display": "omitted"})
    out = rewrite("anthropic.messages", body, Pins())
    assert changes(out) == {
        "thinking": (ENABLED | {"display": "omitted"}, {"type": "adaptive", "display": "omitted"})
    }


def test_effort_goes_in_output_config_next_to_the_format() -> None:
    config = {"format": {"type": "json_schema", "schema": {"type": "object"}}}
    body = claude(output_config=config)
    out = rewrite("anthropic.messages", body, Pins(effort="low"))
    assert changes(out) == {"output_config.effort": (None, "low")}
    assert body["output_config"] == config | {"effort": "low"}
    assert "effort" not in config  # the arm's own object is never edited
    stub_answer("anthropic.messages", body)


# --- OpenAI -------------------------------------------------------------------------------------

OPENAI_PINS = Pins(
    temperature=0.2, top_p=0.9, seed=7, max_tokens=500, reasoning_effort="low", verbosity="low"
)


@pytest.mark.parametrize("model", ["o3", "o4-mini", "gpt-5", "gpt-5-mini", "o1-2024-12-17"])
def test_chat_reasoning_models_get_effort_and_no_samplers(model: str) -> None:
    body = chat(model, temperature=0.7, top_p=0.5, max_tokens=900)
    out = rewrite("openai.chat", body, OPENAI_PINS)
    assert changes(out) == {
        "temperature": (0.7, None),
        "top_p": (0.5, None),
        "reasoning_effort": (None, "low"),
        "verbosity": (None, "low"),
        "max_completion_tokens": (None, 500),
        "max_tokens": (900, None),
    }
    stub_answer("openai.chat", body)


def test_chat_reasoning_model_moves_the_arms_max_tokens() -> None:
    body = chat("o3", max_tokens=900)
    out = rewrite("openai.chat", body, Pins())
    assert changes(out) == {"max_tokens": (900, None), "max_completion_tokens": (None, 900)}
    stub_answer("openai.chat", body)


@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-4.1-mini", "gpt-5-chat-latest"])
def test_chat_other_models_get_samplers_and_seed_not_effort(model: str) -> None:
    body = chat(model, temperature=1.3)
    out = rewrite("openai.chat", body, OPENAI_PINS)
    assert changes(out) == {
        "temperature": (1.3, 0.2),
        "top_p": (None, 0.9),
        "seed": (None, 7),
        "max_completion_tokens": (None, 500),
    }
    assert "reasoning_effort" not in body and "verbosity" not in body
    stub_answer("openai.chat", body)


def test_responses_reasoning_model() -> None:
    body = resp(
        "gpt-5-mini",
        temperature=0.3,
        reasoning={"summary": "auto"},
        text={"format": {"type": "text"}},
    )
    out = rewrite("openai.responses", body, OPENAI_PINS)
    assert changes(out) == {
        "temperature": (0.3, None),
        "reasoning.effort": (None, "low"),
        "text.verbosity": (None, "low"),
        "max_output_tokens": (None, 500),
    }
    assert body["reasoning"] == {"summary": "auto", "effort": "low"}
    assert body["text"] == {"format": {"type": "text"}, "verbosity": "low"}
    stub_answer("openai.responses", body)


def test_responses_other_model_has_no_seed() -> None:
    body = resp("gpt-4.1")
    out = rewrite("openai.responses", body, OPENAI_PINS)
    assert changes(out) == {
        "temperature": (None, 0.2),
        "top_p": (None, 0.9),
        "max_output_tokens": (None, 500),
    }
    stub_answer("openai.responses", body)


# --- every combination: accepted by the stubs, deterministic, idempotent ------------------------

PIN_SETS = [
    Pins(),
    Pins(temperature=0.0),
    Pins(temperature=0.3, top_p=0.5, top_k=20, seed=1),
    Pins(top_p=0.97, top_k=10, max_tokens=3000, thinking=ENABLED),
    Pins(temperature=1.0, thinking={"type": "adaptive"}, effort="max"),
    Pins(temperature=0.5, thinking={"type": "disabled"}, max_tokens=64),
    Pins(max_tokens=4000, reasoning_effort="high", verbosity="high", seed=3),
    Pins(temperature=0.7, max_tokens=2000, reasoning_effort="minimal"),
]

ARM_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("anthropic.messages", claude()),
    ("anthropic.messages", claude(temperature=0.4, top_k=3)),
    ("anthropic.messages", claude(thinking=ENABLED, top_p=0.99)),
    ("anthropic.messages", claude(thinking={"type": "adaptive"}, stream=True)),
    ("anthropic.messages", claude(model="claude-opus-4-6", thinking=ENABLED)),
    ("anthropic.messages", claude(model="claude-haiku-4-5-20251001", top_p=0.8)),
    ("anthropic.messages", claude(model="claude-3-5-haiku-20241022", temperature=0.9)),
    ("openai.chat", chat("gpt-4.1", temperature=0.9, max_tokens=50)),
    ("openai.chat", chat("gpt-5-chat-latest")),
    ("openai.chat", chat("gpt-5", temperature=1, top_p=1, stream=True)),
    ("openai.chat", chat("o3-mini", max_tokens=100, reasoning_effort="high")),
    ("openai.responses", resp("gpt-4.1-mini", top_p=0.3)),
    ("openai.responses", resp("o4-mini", temperature=0.2, reasoning=None)),
    ("openai.responses", resp("gpt-5", reasoning={"effort": "high"}, max_output_tokens=64)),
]


@pytest.mark.parametrize(
    ("route", "arm_body", "pins"),
    [(r, b, p) for (r, b), p in itertools.product(ARM_BODIES, PIN_SETS)],
)
def test_rewritten_bodies_pass_the_stubs_and_rewrite_to_themselves(
    route: str, arm_body: dict[str, Any], pins: Pins
) -> None:
    body = copy.deepcopy(arm_body)
    try:
        out = rewrite(route, body, pins)
    except PinConflict as conflict:
        # A conflict is only acceptable where the pins are impossible for this request.
        assert conflict.field in ("max_tokens", "thinking.budget_tokens", "top_p", "temperature")
        assert body == arm_body
        return
    try:
        stub_answer(route, body)
    except VendorRequestError as e:  # pragma: no cover - the failure message is the point
        pytest.fail(f"stub refused the rewritten body {body}: {e.message}")
    again = copy.deepcopy(arm_body)
    assert rewrite(route, again, pins) == out and again == body  # deterministic
    assert rewrite(route, body, pins) == []  # idempotent
    assert body == again
    applied = {r.field for r in out}
    assert len(applied) == len(out)  # one record per field, never a chain of edits


# --- The arm's body stays as sent ---------------------------------------------------------------


def test_pin_call_leaves_every_object_of_the_arms_body_as_sent() -> None:
    # `sent` is a shallow copy: every object the rewrite changes must be copied first.
    body = claude(temperature=0.5, thinking=ENABLED, output_config={"format": {"type": "text"}})
    as_sent = copy.deepcopy(body)
    state = CallState("anthropic", "/v1/messages", "POST", "arm", "main", 0.0)
    state.route, state.body = find_route("anthropic", "POST", "/v1/messages"), body
    assert pin_call(state, Pins(effort="low")) is None
    assert body == as_sent
    assert state.sent is not None and state.sent["output_config"]["effort"] == "low"
    assert "temperature" not in state.sent  # thinking is on: dropped from the copy only


def test_a_nested_drop_copies_the_objects_on_its_path() -> None:
    inner = {"effort": "low", "keep": 1}
    edit = _Editor({"output_config": inner})
    edit.drop("output_config.effort")
    assert inner == {"effort": "low", "keep": 1}
    assert edit.body["output_config"] == {"keep": 1}
    assert changes(edit.rewrites) == {"output_config.effort": ("low", None)}


# --- Anthropic's OpenAI-compatible route --------------------------------------------------------


def test_thinking_and_effort_pins_reach_the_compatibility_route() -> None:
    """The layer honours `thinking` and `output_config.effort` (issue 36 item 7): a study's (or
    B's) thinking pin lands on Z's compat calls as on the Messages API, temperature dropped as
    thinking requires, the cap kept past the budget; the stub answers the pinned body."""
    from stubs.anthropic.compat import compat_chat

    state = CallState("anthropic", "/v1/chat/completions", "POST", "Z", "main", 0.0)
    state.route = find_route("anthropic", "POST", "/v1/chat/completions")
    assert state.route is not None and state.route.name == "anthropic.chat"
    state.body = chat("claude-sonnet-4-6", temperature=0.5, max_completion_tokens=4096)
    pins = Pins(thinking=ENABLED, effort="low", output_cap=1000)
    assert pin_call(state, pins) is None
    sent = state.sent
    assert sent is not None and sent["thinking"] == ENABLED
    assert sent["output_config"] == {"effort": "low"} and "temperature" not in sent
    assert sent["max_completion_tokens"] == 2049  # the cap, above the pinned budget
    req = StubRequest(
        vendor="anthropic", route="anthropic.chat", body=sent, digest=body_digest(sent)
    )
    assert compat_chat(req, StubContext()).status == 200


def test_the_openai_chat_route_takes_no_thinking_pin() -> None:
    body = chat("gpt-4.1-mini")
    assert "thinking" not in changes(rewrite("openai.chat", body, Pins(thinking=ENABLED)))
