"""The sampling rewrite every mode applies: the study's pinned sampling fields, model-aware.

A study pins sampling (temperature, thinking, effort, ...) so every arm's main calls are made
alike. One function (`pin_call`) rewrites a call in record, replay and live mode alike, so the
request a stub answers in record mode is the request live mode forwards (the gate's requests are
the live requests); the call log keeps the arm's request as sent plus the `rewrites`. Main calls
also get an output cap (`Pins.output_cap`, 6,000 tokens unless the study says otherwise) where the
study pins no `max_tokens` of its own.

Applying a pin blindly would send requests the vendor refuses (temperature with Anthropic
thinking, temperature on OpenAI reasoning models, max_tokens on o-series chat), turning a paid
pilot into a wall of 400s. So each pin is applied only where the model accepts it; a pin the model
cannot take is skipped, and a field in the arm's request that the pinned mode makes illegal is
removed. Every change is returned as a `Rewrite` for the call log; a pin set that cannot be made
valid at all raises `PinConflict`, which the proxy answers with a vendor-shaped 400.

`rewrite_sampling` is pure: no I/O, no clock. Deterministic and idempotent (a rewritten body
rewrites to itself).
"""

from __future__ import annotations

import functools
from typing import Any

from proxy.flow.callstate import CallState
from rundir.calls import Rewrite
from vendors.errors import error_reply
from vendors.models import is_reasoning_model
from vendors.pins import MIN_THINKING_BUDGET, Pins
from vendors.reply import VendorReply

# Models known to deprecate manual thinking budgets in favour of adaptive, for when the installed
# SDK's own list cannot be read.
_FALLBACK_ADAPTIVE_MODELS = ("claude-opus-4-6", "claude-mythos-preview")


@functools.cache
def _sdk_adaptive_models() -> tuple[str, ...]:
    """The SDK's own list of models that deprecate manual thinking budgets. Read on first use,
    not at import: importing the anthropic SDK costs about 2 s, and the study loader, the CLI and
    record mode import this module without ever rewriting a thinking budget."""
    try:
        from anthropic._data import MODELS_TO_WARN_WITH_THINKING_ENABLED
    except ImportError:  # private module: keep working if a later SDK moves it
        return _FALLBACK_ADAPTIVE_MODELS
    return tuple(MODELS_TO_WARN_WITH_THINKING_ENABLED)


__all__ = ["PinConflict", "Rewrite", "pin_call", "rewrite_sampling"]

ROUTES = ("anthropic.messages", "openai.chat", "openai.responses")
# Anthropic's OpenAI-compatible route: OpenAI chat's fields, and Anthropic's `thinking` (and
# `output_config.effort`), which the layer honours (docs/model-identity.md).
COMPAT_ROUTE = "anthropic.chat"

_THINKING_TOP_P_FLOOR = 0.95  # with thinking on, top_p must be >= this or unset
# Anthropic models that still accept temperature and top_p together; every later model (and any
# unknown one, to fail safe) refuses the pair, so only one of them may be sent.
_BOTH_SAMPLERS_OK = (
    "claude-2",
    "claude-instant",
    "claude-3",
    "claude-opus-4-0",
    "claude-sonnet-4-0",
    "claude-opus-4-2025",
    "claude-sonnet-4-2025",
)
_ABSENT = object()  # distinguishes "field missing" from an explicit null in the request


class PinConflict(ValueError):
    """Pins that cannot be applied to this request without the vendor refusing it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class _Editor:
    """Applies changes to one body and remembers each as a Rewrite (no-ops are not recorded)."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.rewrites: list[Rewrite] = []

    def get(self, path: str) -> Any:
        parent = self._parent(path, create=False)
        return _ABSENT if parent is None else parent.get(path.rsplit(".", 1)[-1], _ABSENT)

    def set(self, path: str, value: Any) -> None:
        before = self.get(path)
        if before is not _ABSENT and before == value and type(before) is type(value):
            return
        parent = self._parent(path, create=True)
        assert parent is not None
        parent[path.rsplit(".", 1)[-1]] = value
        self._record(path, before, value)

    def drop(self, path: str) -> None:
        before = self.get(path)
        if before is _ABSENT:
            return
        # Copies the objects on the path, as `set` does: the arm's own are never changed.
        parent = self._parent(path, create=True)
        assert parent is not None
        del parent[path.rsplit(".", 1)[-1]]
        self._record(path, before, None)

    def _parent(self, path: str, *, create: bool) -> dict[str, Any] | None:
        node = self.body
        for key in path.split(".")[:-1]:
            child = node.get(key)
            if create:
                # A copy, never the arm's object, so `before` in the log stays what was sent.
                child = dict(child) if isinstance(child, dict) else {}
                node[key] = child
            elif not isinstance(child, dict):
                return None
            node = child
        return node

    def _record(self, path: str, before: Any, after: Any) -> None:
        self.rewrites.append(
            Rewrite(field=path, before=None if before is _ABSENT else before, after=after)
        )


def rewrite_sampling(
    route: str, model: str, body: dict[str, Any], purpose: str, pins: Pins
) -> list[Rewrite]:
    """Apply `pins` to `body` in place for `route`/`model`; return every change made.

    Only purposes in `pins.purposes` are rewritten; other purposes and unknown routes are left
    untouched. Raises PinConflict when the pins cannot be applied without a vendor refusal.
    """
    compat = route == COMPAT_ROUTE
    wire = "openai.chat" if compat else route
    if purpose not in pins.purposes or wire not in ROUTES:
        return []
    # Work on a shallow copy (the editor copies nested objects before writing) so a PinConflict
    # leaves the arm's body exactly as it came.
    edit = _Editor(dict(body))
    if wire == "anthropic.messages":
        _anthropic(model, edit, pins)
    else:
        _openai(wire, model, edit, pins)
        if compat:
            _compat_thinking(model, edit, pins)
    _cap_output(wire, model, edit, pins)
    if edit.rewrites:
        body.clear()
        body.update(edit.body)
    return edit.rewrites


def pin_call(state: CallState, pins: Pins) -> VendorReply | None:
    """Rewrite one call that passed intake, whatever the mode: `state.sent` is the body to answer
    or forward (a copy of the arm's `state.body`, which the hash and the call log keep as sent),
    `state.rewrites` every change. Returns the vendor-shaped 400 for pins that conflict."""
    if state.route is None or state.body is None:
        return None
    model = state.body.get("model")
    if not isinstance(model, str):
        return None  # refused by the route's own checks, or a route without a model
    # A shallow copy is enough: the editor copies every object it changes (`_Editor._parent`),
    # so `sent` shares only untouched values with the arm's body (no deep copy on every call).
    sent = dict(state.body)
    try:
        # The compatibility route by its own name: its `thinking` is pinned as well.
        route = state.route.name if state.route.name == COMPAT_ROUTE else state.route.wire
        state.rewrites = rewrite_sampling(route, model, sent, state.purpose, pins)
    except PinConflict as e:
        state.outcome = "refused"
        return error_reply(state.vendor, 400, str(e))
    if state.rewrites:
        state.sent = sent
    return None


def _cap_output(route: str, model: str, edit: _Editor, pins: Pins) -> None:
    """The main calls' output cap where the study pins no max_tokens: an arm's larger (or
    missing) output limit is lowered (or set) to the cap; a smaller one is left alone."""
    if pins.max_tokens is not None or not pins.output_cap:
        return
    cap = pins.output_cap
    if route == "anthropic.messages":
        field = "max_tokens"
        thinking = edit.get("thinking")
        if isinstance(thinking, dict) and isinstance(thinking.get("budget_tokens"), int):
            cap = max(cap, thinking["budget_tokens"] + 1)  # the vendor needs room past the budget
    elif route == "openai.chat":
        legacy = edit.get("max_tokens")
        field = "max_tokens" if legacy not in (_ABSENT, None) else "max_completion_tokens"
        thinking = edit.get("thinking")  # Anthropic's compatibility route takes it
        if isinstance(thinking, dict) and isinstance(thinking.get("budget_tokens"), int):
            cap = max(cap, thinking["budget_tokens"] + 1)
    else:
        field = "max_output_tokens"
    current = edit.get(field)
    number = isinstance(current, int) and not isinstance(current, bool)
    if current in (_ABSENT, None) or (number and current > cap):
        edit.set(field, cap)


def prefers_adaptive(model: str) -> bool:
    """Models whose SDK steers `thinking.type=enabled` to adaptive (dated snapshots included)."""
    return any(model == m or model.startswith(m + "-") for m in _sdk_adaptive_models())


def _anthropic(model: str, edit: _Editor, pins: Pins) -> None:
    if pins.max_tokens is not None:
        edit.set("max_tokens", pins.max_tokens)
    thinking = _wanted_thinking(model, edit.get("thinking"), pins)
    if thinking is not _ABSENT:
        edit.set("thinking", thinking)
    if pins.thinking is not None or pins.max_tokens is not None:
        _check_budget(thinking, edit.get("max_tokens"))
    if pins.effort is not None:
        edit.set("output_config.effort", pins.effort)
    # "between_tools" thinks too; treating it as on costs at most a recorded drop of a sampler,
    # where treating it as off could send a request the vendor refuses.
    on = isinstance(thinking, dict) and thinking.get("type") in (
        "enabled",
        "adaptive",
        "between_tools",
    )
    _anthropic_samplers(model, edit, pins, thinking_on=on)


def _wanted_thinking(model: str, current: Any, pins: Pins) -> Any:
    """The thinking config to send: the pin (keeping the arm's `display`), made adaptive for
    models that steer manual budgets there -- the arm's own budget included."""
    wanted = current
    if pins.thinking is not None:
        wanted = pins.thinking.model_dump()
        display = current.get("display") if isinstance(current, dict) else None
        # `display` is presentation, not sampling, and only thinking-on configs accept it.
        if display is not None and wanted["type"] != "disabled":
            wanted["display"] = display
    if isinstance(wanted, dict) and wanted.get("type") == "enabled" and prefers_adaptive(model):
        wanted = {
            "type": "adaptive",
            **{k: v for k, v in wanted.items() if k not in ("type", "budget_tokens")},
        }
    return wanted


def _check_budget(thinking: Any, max_tokens: Any) -> None:
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
        raise PinConflict(
            "thinking.budget_tokens",
            f"thinking.budget_tokens must be an integer >= {MIN_THINKING_BUDGET} (got "
            f"{budget!r}): pin thinking with a larger budget_tokens",
        )
    if isinstance(max_tokens, int) and budget >= max_tokens:
        raise PinConflict(
            "max_tokens",
            f"max_tokens ({max_tokens}) must be greater than thinking.budget_tokens ({budget}): "
            "pin max_tokens above the budget, or pin a smaller budget_tokens",
        )


def _anthropic_samplers(model: str, edit: _Editor, pins: Pins, *, thinking_on: bool) -> None:
    if pins.temperature is not None and pins.temperature > 1:
        raise PinConflict(
            "temperature",
            f"temperature {pins.temperature} is above Anthropic's maximum of 1: pin a "
            "temperature in [0, 1] for studies that include Anthropic models",
        )
    temperature_pinned = pins.temperature is not None and (not thinking_on or pins.temperature == 1)
    top_p_pinned = pins.top_p is not None and (
        not thinking_on or pins.top_p >= _THINKING_TOP_P_FLOOR
    )
    if temperature_pinned:
        edit.set("temperature", pins.temperature)
    elif thinking_on and edit.get("temperature") not in (_ABSENT, None, 1):
        edit.drop("temperature")  # thinking allows only the default temperature
    if top_p_pinned:
        edit.set("top_p", pins.top_p)
    elif thinking_on and not _top_p_ok_with_thinking(edit.get("top_p")):
        edit.drop("top_p")
    if thinking_on:
        edit.drop("top_k")  # the vendor refuses any top_k with thinking on
    elif pins.top_k is not None:
        edit.set("top_k", pins.top_k)
    _one_sampler(model, edit, temperature_pinned=temperature_pinned, top_p_pinned=top_p_pinned)


def _compat_thinking(model: str, edit: _Editor, pins: Pins) -> None:
    """The thinking and effort pins on Anthropic's OpenAI-compatible route (issue 36 item 7): the
    layer reads `thinking` and `output_config.effort` as the Messages API does, so they are
    pinned as there, with the samplers thinking allows (temperature 1 only, top_p >= 0.95)."""
    thinking = _wanted_thinking(model, edit.get("thinking"), pins)
    if thinking is not _ABSENT:
        edit.set("thinking", thinking)
    if pins.effort is not None:
        edit.set("output_config.effort", pins.effort)
    on = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if on and edit.get("temperature") not in (_ABSENT, None, 1):
        edit.drop("temperature")
    if on and not _top_p_ok_with_thinking(edit.get("top_p")):
        edit.drop("top_p")
    if pins.thinking is not None:
        limit = edit.get("max_completion_tokens")
        if limit in (_ABSENT, None):
            limit = edit.get("max_tokens")
        _check_budget(thinking, limit)


def _top_p_ok_with_thinking(value: Any) -> bool:
    if value is _ABSENT or value is None:
        return True
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and value >= _THINKING_TOP_P_FLOOR


def _one_sampler(
    model: str, edit: _Editor, *, temperature_pinned: bool, top_p_pinned: bool
) -> None:
    """Claude 4.1 and later refuse temperature and top_p in one request: keep the pinned one."""
    if model.startswith(_BOTH_SAMPLERS_OK):
        return
    if edit.get("temperature") in (_ABSENT, None) or edit.get("top_p") in (_ABSENT, None):
        return
    if temperature_pinned and top_p_pinned:
        raise PinConflict(
            "top_p",
            f"{model} accepts temperature or top_p, not both: pin only one of them",
        )
    edit.drop("temperature" if top_p_pinned else "top_p")


def _openai(route: str, model: str, edit: _Editor, pins: Pins) -> None:
    chat = route == "openai.chat"
    if is_reasoning_model(model):
        # Reasoning models refuse non-default temperature/top_p: never send them at all.
        edit.drop("temperature")
        edit.drop("top_p")
        if pins.reasoning_effort is not None:
            edit.set("reasoning_effort" if chat else "reasoning.effort", pins.reasoning_effort)
        # verbosity came with the gpt-5 reasoning family; older models refuse it.
        if pins.verbosity is not None:
            edit.set("verbosity" if chat else "text.verbosity", pins.verbosity)
    else:
        if pins.temperature is not None:
            edit.set("temperature", pins.temperature)
        if pins.top_p is not None:
            edit.set("top_p", pins.top_p)
        # Only chat completions takes a seed; the Responses API has no such field.
        if chat and pins.seed is not None:
            edit.set("seed", pins.seed)
    if chat:
        _chat_max_tokens(model, edit, pins)
    elif pins.max_tokens is not None:
        edit.set("max_output_tokens", pins.max_tokens)


def _chat_max_tokens(model: str, edit: _Editor, pins: Pins) -> None:
    # max_completion_tokens works for every chat model and max_tokens is refused by reasoning
    # models, so a pin always lands there, and the legacy field goes (never both in one request).
    if pins.max_tokens is not None:
        edit.set("max_completion_tokens", pins.max_tokens)
        edit.drop("max_tokens")
    elif is_reasoning_model(model) and edit.get("max_tokens") not in (_ABSENT, None):
        legacy = edit.get("max_tokens")
        edit.drop("max_tokens")
        if edit.get("max_completion_tokens") in (_ABSENT, None):
            edit.set("max_completion_tokens", legacy)
