"""vendors/pins.py model identity: `[pins.models]` and which served ids match a pin."""

from __future__ import annotations

import pytest

from vendors.pins import Pins, served_matches


@pytest.mark.parametrize(
    ("pinned", "served", "match"),
    [
        ("claude-haiku-4-5", "claude-haiku-4-5", True),
        ("claude-haiku-4-5", "claude-haiku-4-5-20251001", True),
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5-20251001", True),
        ("gpt-4.1-mini", "gpt-4.1-mini-2025-04-14", True),
        ("gpt-4.1", "gpt-4.1-mini-2025-04-14", False),
        ("gpt-4.1", "gpt-4.1-mini", False),
        ("claude-haiku-4-5", "claude-sonnet-4-6", False),
        ("claude-haiku-4-5", "claude-haiku-4-5-evil", False),
        ("claude-haiku-4-5", None, False),
        ("claude-haiku-4-5", "", False),
    ],
)
def test_served_matches(pinned: str, served: str | None, match: bool) -> None:
    assert served_matches(pinned, served) is match


def test_models_pin_per_purpose_and_a_bad_table_is_named() -> None:
    pins = Pins.from_toml_table({"models": {"main": "gpt-4.1-mini", "embedding": "e3"}})
    assert pins.pinned_model("main") == "gpt-4.1-mini" and pins.pinned_model("guard") is None
    with pytest.raises(ValueError, match=r"pins\.models"):
        Pins.from_toml_table({"models": {"main": 3}})
