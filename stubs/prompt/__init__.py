"""What the conversation says: its parts, the user's stated facts, grounding, the tool policy
(token estimates are in vendors.tokens).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

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
