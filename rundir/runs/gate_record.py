"""`gate.json`: the determinism gate's record, and the check `harness live` makes against it.

Kept apart from harness/checks/gate.py (which runs studies) so that harness/run/pipeline.py can
check for a passing gate without importing the code that drives runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rundir.model import RunDirModel

GATE_SCHEMA: Literal[1] = 1
GATE_FILE = "gate.json"


class GateRequest(BaseModel):
    """One request as the proxy received it (unmasked, from the run's bodies)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    seq: int
    method: str
    route: str
    path: str
    request_hash: str  # the proxy's, over the masked request
    request_body: str | None  # SHA-256 key into the run's bodies
    body: Any = None  # the JSON body; a non-JSON body is shown as text


class Divergence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arm: str
    item: str | None
    turn: int | None
    index: int  # the call's position among the turn's calls, by arrival
    kind: Literal["differs", "only_in_first", "only_in_second", "body_unreadable"]
    paths: list[str] = Field(default_factory=list)  # JSON paths (mask syntax) that differ
    diff: str  # readable: one line per differing path, first run's value -> second's
    # A unified diff of the two masked bodies as canonical JSON, long strings cut to the window
    # around their first difference (harness/checks/body_diff.py); '' in gate.json files
    # written before it was added.
    body_diff: str = ""
    first: GateRequest | None = None
    second: GateRequest | None = None


class GateRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    run_dir: str
    passed: bool
    stray_connections: int
    calls: int
    # How the run pinned its arms' clocks (its run.json); None in older gate.json files.
    clock_pinning: str | None = None


class GateCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: int = 0  # (arm, item, turn) groups seen in either run
    calls_compared: int = 0
    calls_matching: int = 0
    reordered_turns: int = 0  # same requests in a different arrival order: not a divergence
    divergences: int = 0


class PairCheck(BaseModel):
    """The cross-arm gate on one declared pair (harness/checks/pair_gate.py): on the turn after
    each firing of its elements file, the follower's main request must be the leader's with the
    element's text added. A failed pair drops the follower from live runs
    (harness/run/live/dropped.py); it does not fail the determinism gate, so the leader goes on as
    the candidate."""

    model_config = ConfigDict(extra="forbid")

    leader: str
    follower: str
    differ_by: str  # the elements file, as the study names it
    elements_sha256: str
    passed: bool
    checked: int = 0  # (run, firing) comparisons made
    failures: list[str] = Field(default_factory=list)  # one line each: run, item, turn, why


class GateRecord(RunDirModel):
    schema_: Literal[1] = Field(GATE_SCHEMA, alias="schema")
    gate_id: str
    study: str
    study_path: str
    study_sha256: str
    compose_sha256: str | None
    items_sha256: str
    images: dict[str, str] = Field(default_factory=dict)
    started: str
    ended: str
    passed: bool
    why: list[str] = Field(default_factory=list)  # what failed, in words
    masks: list[str]  # dotted body paths removed before comparing (defaults + the study's)
    study_masks: list[str] = Field(default_factory=list)
    excluded_headers: list[str] = Field(default_factory=list)
    runs: list[GateRun]
    counts: GateCounts
    divergences: list[Divergence] = Field(default_factory=list)
    # The cross-arm gate's pairs (a study with [[gate.pairs]]); [] in older gate.json files.
    pairs: list[PairCheck] = Field(default_factory=list)


def read_gate(path: Path) -> GateRecord | None:
    try:
        return GateRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


def passing_gate(study_sha256: str, compose_sha256: str | None, run_root: Path) -> Path | None:
    """The newest passing gate of this very study (these study and compose hashes) under
    `run_root`, or None: live mode pays only for a study that sends the same requests twice."""
    for path in sorted(run_root.glob(f"*/{GATE_FILE}"), reverse=True):
        record = read_gate(path)
        if (
            record is not None
            and record.passed
            and record.study_sha256 == study_sha256
            and record.compose_sha256 == compose_sha256
        ):
            return path
    return None
