"""What a study run records of its protocol in run.json: each frozen file's SHA-256 (as locked and
as read when the run started: the run refuses to start unless they agree) and the addendum's.

The addendum itself is copied into the run directory (`protocol/addendum.toml`, listed in the
manifest like every run file), so an auditor holding only the run reads its entries and `harness
audit` checks the copy against the hash here. Frozen files are private to the study: only their
hashes travel with the run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

ADDENDUM_COPY = "protocol/addendum.toml"


class FrozenHash(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str  # as the study names it, relative to the study file
    sha256: str
    frozen: str  # when `harness protocol freeze` locked it (ISO 8601, UTC)


class ProtocolRecord(BaseModel):
    """run.json's `study.protocol`; absent on runs of studies without a [protocol] table and on
    runs written before it existed."""

    model_config = ConfigDict(extra="forbid")

    frozen: list[FrozenHash]
    addendum: str | None = None  # as the study names it
    addendum_sha256: str | None = None


def addendum_copies(run_dir: Path) -> list[Path]:
    """The run's copy of the addendum, then (a run `harness merge` joined) each shard's, which
    the merge keeps under shards/<index>/."""
    own = run_dir / ADDENDUM_COPY
    shards = sorted(run_dir.glob(f"shards/*/{ADDENDUM_COPY}"))
    return ([own] if own.is_file() else []) + shards
