"""Shards: one study's items split over N runs (machines, array tasks), and what a run directory
records of them.

A shard is run I of N (1-based, as `--shard 1/3` reads). Its items are the study's items (after
`--limit`) at positions I-1, I-1+N, I-1+2N, ...: round robin, so shards get the same number of
items give or take one, whatever order the items file keeps, and the split depends only on the
item list and N (every machine computes the same one). Each shard is a run of its own, with
the study's hashes unchanged; `harness merge` joins them (rundir/merge/join.py), and the merged run
lists its shards in `merged_from`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

T = TypeVar("T")


class Shard(BaseModel):
    """What a shard's run.json says of it (`study.shard`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    # Where the index came from: "flag" (--shard I/N, HARNESS_SHARD), "slurm", "kubernetes".
    source: str = "flag"
    items: list[str] = Field(default_factory=list)  # the item ids this shard ran, in order
    # How many items were split (the study's, after --limit): equal in every shard of one run.
    of_items: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _in_range(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index}/{self.count}: the index is past the count")
        return self

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


class MergedShard(BaseModel):
    """One shard of a merged run (`study.merged_from`): which run it was, and how its call
    numbers map into the merged call log (merged seq = seq_offset + the shard's own seq)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    run_id: str
    run_dir: str
    items: list[str] = Field(default_factory=list)
    seq_offset: int = Field(ge=0)
    calls: int = Field(ge=0)
    # live: the ledger's length and head when the shard ended (its manifest's).
    ledger_entries: int | None = None
    ledger_head: str | None = None
    # SHA-256 of the shard's manifest as merged (rundir/merge/checks.py): the audit re-checks
    # the shard against it. None in runs merged before it.
    manifest_sha256: str | None = None
    passed: bool | None = None
    failure: str | None = None  # why the shard failed, in its run.json's words


def shard_items(items: Sequence[T], index: int, count: int) -> list[T]:
    """The items of shard `index` of `count` (1-based): round robin over the given order."""
    if not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: the index must be 1..{count}")
    return [item for position, item in enumerate(items) if position % count == index - 1]
