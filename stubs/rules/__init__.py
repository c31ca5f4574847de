"""The stubs file (stubs.toml): reply rules, delays and the context each stub handler receives.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "context",
    "delays",
    "replies",
]
