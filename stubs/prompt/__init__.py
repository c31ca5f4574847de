"""What the conversation says: its parts, the user's stated facts, grounding, the tool policy
(token estimates are in vendors.tokens).

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "conversation",
    "grounding",
    "parts",
    "said",
    "tool_policy",
]
