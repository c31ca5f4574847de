"""Run directories: `runs/<run-id>/` and their header, `run.json`."""

from __future__ import annotations

import hashlib
import json
import platform
import secrets
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rundir.atomic import write_atomic
from rundir.errors import RunDirError
from rundir.model import RunDirModel, schema_too_new
from rundir.runs.limits import AppliedLimits, ResourceLimits
from rundir.runs.manifest import Manifest
from rundir.runs.protocol import ProtocolRecord
from rundir.runs.shards import MergedShard, Shard

RUN_SCHEMA: Literal[1] = 1
HEADER_FILE = "run.json"


class StudyRun(BaseModel):
    """What a study run (`harness record|live`) adds to its header. Optional in RunHeader, so
    schema 1 headers written by `harness proxy serve` stay valid."""

    model_config = ConfigDict(extra="forbid")

    name: str
    study_path: str
    study_sha256: str
    compose_sha256: str | None = None
    items_sha256: str
    prices_sha256: str | None = None
    pins: dict[str, object] = Field(default_factory=dict)
    # The study's engine parity (harness/study/parity.py): `arms` and the fields it fixes, handed to
    # those arms over the seam; {} when the study sets none.
    parity: dict[str, object] = Field(default_factory=dict)
    isolation: str
    isolation_reason: str | None = None  # the flag, or what `--isolation auto` found
    clock_pinning: Literal["libfaketime", "seam-only"]
    # How the clock was pinned, in a sentence (harness/isolation/clock.py): for libfaketime,
    # the offset's precision and how often the arm re-reads it. None in runs made before it.
    clock_pin: str | None = None
    seeds: dict[str, int] = Field(default_factory=dict)
    arms: list[str] = Field(default_factory=list)
    items: int = 0
    deadline_ms: int
    # Filled in at the end: None while running (or if the harness crashed).
    passed: bool | None = None
    interrupted: bool = False
    outcomes: dict[str, int] = Field(default_factory=dict)
    infra_failures: int = 0
    stray_connections: int = 0
    # Per arm with memory controls: how many of its turns missed
    # (harness/checks/memory_controls.py).
    memory_miss: dict[str, int] = Field(default_factory=dict)
    # --allow-misses: the run passes although an arm missed its memory controls.
    allow_misses: bool = False
    # Per arm: its turns' outcomes, and why it failed the run if it did (completed no turn, or
    # failed more turns than the study's [verdict] max_failure_rate): harness/checks/arm_verdict.py.
    arm_outcomes: dict[str, dict[str, int]] = Field(default_factory=dict)
    arm_failures: dict[str, str] = Field(default_factory=dict)
    max_failure_rate: float | None = None
    # Refused connections per arm and destination, and those made after the arm's last turn
    # (its teardown: telemetry flushed at exit), from the final egress read
    # (harness/run/watch/strays.py).
    refused: dict[str, dict[str, int]] = Field(default_factory=dict)
    teardown_strays: dict[str, dict[str, int]] = Field(default_factory=dict)
    # --resume: the run this one continues, and the (item, arm) pairs it skipped as finished.
    resumed_from: str | None = None
    skipped_pairs: int = 0
    # --shard I/N: this run is one shard of the study (rundir/runs/shards.py); a run `harness merge`
    # joined from shards names them, each with its run id and call numbering.
    shard: Shard | None = None
    merged_from: list[MergedShard] = Field(default_factory=list)
    # Docker: the capabilities each arm's container got back (it starts with none).
    capabilities: dict[str, list[str]] = Field(default_factory=dict)
    on_stray: Literal["halt", "fail"] = "halt"
    # on_stray = "halt": the refused connection that stopped the run, in one line.
    halted: str | None = None
    # The bad input that stopped the run when its item came (a LongMemEval question whose turns
    # are broken: harness/datasets), in one line; the run failed.
    stopped: str | None = None
    # The study's bounds for every arm, and per arm what the backend held as it read it back
    # (rundir/runs/limits.py): the audit checks that every arm ran under the same.
    limits: ResourceLimits | None = None
    arm_limits: dict[str, AppliedLimits] = Field(default_factory=dict)
    # Per arm: refused packets the firewall counted beyond the kernel-log entries in egress.jsonl
    # (the kernel log lost them before they were read): evidence dropped, said in the summary.
    egress_dropped: dict[str, int] = Field(default_factory=dict)
    # The OS rule on the proxy's own connections ("enforced: ..." or "not enforced: why") and
    # what it refused, "<destination> (<kind>)" -> attempts (rundir/network/proxy_egress.py); any
    # refusal fails the run. None on runs written before the rule existed.
    proxy_rule: str | None = None
    proxy_refused: dict[str, int] = Field(default_factory=dict)
    # The model under study ("<vendor>/<model>") and the protocol's hashes
    # (rundir/runs/protocol.py); None on studies that declare neither and on runs written before
    # they existed.
    subject: str | None = None
    protocol: ProtocolRecord | None = None
    # Live: arms left out before any spend, and why (harness/run/live/dropped.py): the followers of
    # cross-arm gate pairs that failed (docs/coupled.md).
    dropped_arms: dict[str, str] = Field(default_factory=dict)
    # Live: V0, the integration suite's record the run started on ("passed on commit ..., tree
    # ...") or "not checked: --skip-suite ..." (a deviation); None on record runs and older runs.
    suite: str | None = None


class RunHeader(RunDirModel):
    schema_: Literal[1] = Field(RUN_SCHEMA, alias="schema")
    run_id: str
    mode: Literal["record", "live", "replay"]
    kind: Literal["proxy", "study"] = "proxy"
    started: str
    ended: str | None = None
    stubs_sha256: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    study: StudyRun | None = None
    manifest: Manifest | None = None  # written at the end of the run (rundir/runs/manifest.py)
    # `harness proxy serve` runs: the OS rule on the proxy's own traffic, as a study's
    # `study.proxy_rule` says it ("not enforced: why"); a study run's is in `study`.
    proxy_rule: str | None = None


def new_run_id(prefix: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{prefix}-{stamp}-{secrets.token_hex(3)}"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("harness", "mitmproxy", "anthropic", "openai"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_header(run_dir: Path, header: RunHeader) -> None:
    """Write run.json atomically (rundir.atomic: temporary file, fsync, rename)."""
    text = json.dumps(header.model_dump(by_alias=True), indent=2) + "\n"
    write_atomic(run_dir / HEADER_FILE, text)


def read_header(run_dir: Path) -> RunHeader:
    """run.json of `run_dir`, validated (and upgraded from an older schema). The one reader of
    run headers: missing, unreadable or invalid all raise RunDirError saying what to do."""
    path = run_dir / HEADER_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunDirError(
            f"{run_dir} is not a run directory (no {HEADER_FILE})",
            hint="give a run directory, e.g. runs/<run-id>",
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunDirError(f"cannot read {path}: {e}", hint="check the file's permissions") from None
    try:
        return RunHeader.model_validate_json(text)
    except ValidationError as e:
        too_new = schema_too_new(e)
        if too_new is not None:
            raise RunDirError(f"{path}: {too_new.message}", hint=too_new.hint) from None
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(the file)"
        raise RunDirError(
            f"{path} is not a run header this harness reads: {where}: {first['msg']}",
            hint="run `harness audit` on it to see what is damaged",
        ) from None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
