"""What the conversation says: its parts, the user's stated facts, grounding, the tool policy
(token estimates are in vendors.tokens).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stubs.prompt.conversation import Turn, turn_of
    from stubs.prompt.grounding import (
        Grounding,
        field_kind,
        grounding_from,
        grounding_of,
        iso,
        sentences_of,
    )
    from stubs.prompt.parts import build_parts, check_part, render_json, string_values
    from stubs.prompt.said import engine_tag_text, field_sections, without_assistant
    from stubs.prompt.tool_policy import OfferedTool, fit_score, focus_of, tools_to_call

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "Grounding": "stubs.prompt.grounding",
    "OfferedTool": "stubs.prompt.tool_policy",
    "Turn": "stubs.prompt.conversation",
    "build_parts": "stubs.prompt.parts",
    "check_part": "stubs.prompt.parts",
    "engine_tag_text": "stubs.prompt.said",
    "field_kind": "stubs.prompt.grounding",
    "field_sections": "stubs.prompt.said",
    "fit_score": "stubs.prompt.tool_policy",
    "focus_of": "stubs.prompt.tool_policy",
    "grounding_from": "stubs.prompt.grounding",
    "grounding_of": "stubs.prompt.grounding",
    "iso": "stubs.prompt.grounding",
    "render_json": "stubs.prompt.parts",
    "sentences_of": "stubs.prompt.grounding",
    "string_values": "stubs.prompt.parts",
    "tools_to_call": "stubs.prompt.tool_policy",
    "turn_of": "stubs.prompt.conversation",
    "without_assistant": "stubs.prompt.said",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "Grounding",
    "OfferedTool",
    "Turn",
    "build_parts",
    "check_part",
    "engine_tag_text",
    "field_kind",
    "field_sections",
    "fit_score",
    "focus_of",
    "grounding_from",
    "grounding_of",
    "iso",
    "render_json",
    "sentences_of",
    "string_values",
    "tools_to_call",
    "turn_of",
    "without_assistant",
]
