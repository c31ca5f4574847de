"""Controls: an A/A replicate must show no difference; a must-fail control must lose."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.controls import aa_control, must_fail_control

ITEMS = [f"item-{i // 3}" for i in range(90)]  # 30 items of 3 turns


def test_two_replicates_of_one_arm_pass_the_aa_control() -> None:
    rng = np.random.default_rng(1)
    ability = np.repeat(rng.random(30), 3)
    # Each replicate is the same arm with its own noise: right or wrong by the same chances.
    first = (rng.random(90) < ability).astype(float)
    second = (rng.random(90) < ability).astype(float)
    result = aa_control("bare", first, second, ITEMS, metric="exact match")
    assert result.passed and result.flags == []
    (comparison,) = result.comparisons
    assert comparison.interval.contains(0.0) and comparison.interval.clusters == 30
    assert result.model_dump()["kind"] == "aa"


def test_replicates_that_differ_fail_the_aa_control_with_a_flag() -> None:
    # The second replicate is systematically worse, as a cache warmed by the first would make it.
    rng = np.random.default_rng(2)
    first = rng.normal(0.8, 0.05, 90)
    second = first - 0.2 + rng.normal(0, 0.05, 90)
    result = aa_control("bare", first, second, ITEMS)
    assert not result.passed
    (flag,) = result.flags
    assert "A/A control failed" in flag and "bare" in flag and "excluding 0" in flag
    assert result.comparisons[0].interval.low > 0


def test_a_scrambled_store_that_loses_passes_and_one_that_keeps_up_is_flagged() -> None:
    rng = np.random.default_rng(3)
    real = np.repeat(rng.uniform(0.6, 0.9, 30), 3) + rng.normal(0, 0.05, 90)
    scrambled = rng.normal(0.1, 0.05, 90)
    result = must_fail_control(
        "scrambled", scrambled, {"mem0": real, "graphiti": real - 0.3}, ITEMS
    )
    assert result.passed and result.flags == []
    assert [c.arm for c in result.comparisons] == ["graphiti", "mem0"]
    # A "control" as good as a real arm: the items are answerable without the memory.
    leaky = real + rng.normal(0, 0.05, 90)
    flagged = must_fail_control("scrambled", leaky, {"mem0": real, "graphiti": real - 0.3}, ITEMS)
    assert not flagged.passed
    assert [c.passed for c in flagged.comparisons] == [False, False]
    assert len(flagged.flags) == 2 and "not beaten by mem0 on score" in flagged.flags[1]
    assert "must lie wholly above 0" in flagged.flags[1]


def test_must_fail_respects_lower_is_better() -> None:
    # Log loss: the control's loss must be the higher one.
    rng = np.random.default_rng(4)
    real_loss = rng.uniform(0.2, 0.5, 90)
    control_loss = np.full(90, np.log(100))
    good = must_fail_control("empty", control_loss, {"mem0": real_loss}, higher_is_better=False)
    assert good.passed and good.comparisons[0].interval.estimate > 0
    bad = must_fail_control("empty", real_loss, {"mem0": control_loss}, higher_is_better=False)
    assert not bad.passed


def test_a_control_needs_arms_to_lose_to() -> None:
    with pytest.raises(ValueError, match="at least one real arm"):
        must_fail_control("scrambled", [0.0], {})
    with pytest.raises(ValueError, match="both the control"):
        must_fail_control("x", [0.0], {"x": [1.0]})
