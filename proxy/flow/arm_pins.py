"""Pins taken from a reference arm (issue 25 item 6): with `[pins] from_arm = "B"`, the sampling
fields of B's captured main request of an item and turn are pinned on every other arm's main
requests of that same item and turn, in every mode (the coupled order runs B's turn first).

B's request is captured as it was sent (after its own rewrite: the study's pins and the output
cap), the first main request of its turn; only the fields B's request set are taken, read into
the study's `Pins` whatever B's vendor (Anthropic's `output_config.effort` as `effort`, OpenAI's
`reasoning.effort` as `reasoning_effort`, any output limit as `max_tokens`), and laid over the
study's own pins, so the one rewrite (proxy.flow.sampling) applies them model-aware. A follower's
record is flagged `pins_from=B#SEQ` (B's call) and its `rewrites` name each field set; a follower
whose turn has no captured B request (B failed before its main call) keeps the study's pins and
is flagged `pins_from_missing`, so the comparison's reader sees the turn was not pinned to B.

Captures are kept per reference instance (`B`, or worker k's `B@k`) and dropped only when that
instance starts another item: an item runs on one worker, every arm's turn t before any turn t+1,
so the other arms of the item have all asked by then, and another worker's turns are never
dropped (a count-based bound once cleared a running turn's capture under `--workers`).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from proxy.flow.callstate import CallState
from vendors.pins import Pins

MISSING_FLAG = "pins_from_missing"
UNREADABLE_FLAG = "pins_from_unreadable"

# Per wire route: the request field (dotted) -> the Pins field it is read into.
SAMPLING_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "anthropic.messages": (
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("top_k", "top_k"),
        ("max_tokens", "max_tokens"),
        ("thinking", "thinking"),
        ("output_config.effort", "effort"),
    ),
    "openai.chat": (
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("seed", "seed"),
        ("max_tokens", "max_tokens"),
        ("max_completion_tokens", "max_tokens"),  # read last: it wins over the legacy field
        ("reasoning_effort", "reasoning_effort"),
        ("verbosity", "verbosity"),
    ),
    "openai.responses": (
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("max_output_tokens", "max_tokens"),
        ("reasoning.effort", "reasoning_effort"),
        ("text.verbosity", "verbosity"),
    ),
}
_THINKING_KEYS = ("type", "budget_tokens")  # `display` is presentation, not sampling


def sampling_of(route: str, body: dict[str, Any]) -> dict[str, Any]:
    """The sampling fields `body` sets on wire route `route`, as Pins fields (None not set)."""
    found: dict[str, Any] = {}
    for path, pin in SAMPLING_FIELDS.get(route, ()):
        node: Any = body
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            continue
        if pin == "thinking" and isinstance(node, dict):
            node = {k: v for k, v in node.items() if k in _THINKING_KEYS}
        found[pin] = node
    return found


class ReferenceBook:
    """The reference arm's captured main request per item and turn, for the other arms."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], tuple[int, dict[str, Any]]] = {}
        self._item_of: dict[str, str] = {}  # reference instance -> the item it captures for

    def capture(self, state: CallState, pins: Pins) -> None:
        """Keep the reference arm's first main request of its turn (as it was sent)."""
        ref = state.turn
        if pins.from_arm is None or state.arm != pins.from_arm or ref is None:
            return
        if state.purpose not in pins.purposes or state.route is None or state.body is None:
            return
        key = (ref.item, ref.turn)
        if key in self._kept:
            return
        instance = state.instance or state.arm
        before = self._item_of.get(instance)
        if before != ref.item:
            # Items are unique to a worker: the instance's last item is finished in every arm.
            if before is not None:
                self._kept = {k: v for k, v in self._kept.items() if k[0] != before}
            self._item_of[instance] = ref.item
        sent = state.sent if state.sent is not None else state.body
        self._kept[key] = (state.seq, sampling_of(state.route.wire, sent))

    def pins_for(self, state: CallState, pins: Pins) -> Pins:
        """The pins for this call: the study's, with the reference arm's captured fields laid
        over them for another arm's main call (the call flagged either way)."""
        arm = pins.from_arm
        if arm is None or state.arm == arm or state.purpose not in pins.purposes:
            return pins
        ref = state.turn
        kept = self._kept.get((ref.item, ref.turn)) if ref is not None else None
        if kept is None:
            state.flags.append(MISSING_FLAG)
            return pins
        seq, fields = kept
        try:
            merged = Pins.model_validate({**pins.model_dump(), **fields})
        except ValidationError:
            # A field of B's request the study's pins cannot hold (a vendor's newer effort
            # value): the study's pins stand, and the record says B's were not taken.
            state.flags.append(UNREADABLE_FLAG)
            return pins
        state.flags.append(f"pins_from={arm}#{seq}")
        return merged
