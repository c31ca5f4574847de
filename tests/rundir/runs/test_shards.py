"""The item split of `--shard I/N`: every item in exactly one shard, balanced, in the study's order,
and the same on every machine (a pure function of the item list and N)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rundir.runs.shards import Shard, shard_items


@pytest.mark.parametrize("n_items", [1, 5, 6, 17])
@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_every_item_is_in_exactly_one_shard_and_shards_differ_by_at_most_one(
    n_items: int, count: int
) -> None:
    items = [f"item-{k}" for k in range(n_items)]
    parts = [shard_items(items, index, count) for index in range(1, count + 1)]
    joined = [item for part in parts for item in part]
    assert sorted(joined) == sorted(items) and len(joined) == len(items)
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1
    for part in parts:  # each shard keeps the study's order
        assert part == sorted(part, key=items.index)


def test_the_split_is_round_robin_over_the_given_order() -> None:
    assert shard_items(list("abcdefg"), 1, 3) == ["a", "d", "g"]
    assert shard_items(list("abcdefg"), 3, 3) == ["c", "f"]


@pytest.mark.parametrize(("index", "count"), [(0, 3), (4, 3), (1, 0)])
def test_a_shard_outside_its_count_is_refused(index: int, count: int) -> None:
    with pytest.raises(ValueError, match="shard"):
        shard_items(["a"], index, count)


def test_run_json_cannot_hold_a_shard_past_its_count() -> None:
    with pytest.raises(ValidationError, match="past the count"):
        Shard(index=4, count=3)
    assert Shard(index=2, count=3).label == "2/3"
