"""The call log: `calls.jsonl`, one validated `CallRecord` per call, append-only.

Each line is written and flushed to the OS before the call's reply leaves the proxy (plain
replies) so a failure to write stops the call (fail closed). Durability is group-committed: a
background task fsyncs the log and the new body files every `sync_interval` seconds and at
close, which keeps the hot path free of per-call fsyncs. The interval is 0.1 s in live and
replay mode and 1 s in record mode (rundir/control/proxy_file.py): a proxy that crashes loses
nothing it wrote (each line is in the OS before the reply leaves), and an OS crash or power cut
loses at most the last interval's calls (in record mode free: record the run again,
docs/record-mode.md).
"""

from __future__ import annotations

import os
import threading
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rundir.model import RunDirModel

CALL_SCHEMA: Literal[1] = 1

Outcome = Literal[
    "ok",
    "vendor_error",
    "bad_request",
    "refused",
    "client_disconnect",
    "upstream_cut",
    "upstream_deadline",
    "error_event",
    "proxy_error",
    "shutdown",
    "replay_miss",  # replay: no recorded response matched the request (proxy.modes.replay)
]


TokenSource = Literal["vendor", "stub", "proxy_count", "partial", "reservation", "none"]


class Tokens(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: int = 0  # excludes cache reads and writes
    output: int = 0  # billed total, reasoning included
    cache_read: int = 0
    cache_write: int = 0  # all cache writes, both lifetimes
    cache_write_1h: int = 0  # the part of `cache_write` with the dearer 1-hour lifetime
    reasoning: int = 0  # the part of `output` spent thinking
    # Server-side tool uses booked at the price table's per-use fees ("anthropic.web_search": 3),
    # so an audit re-prices fees as well as tokens.
    tool_uses: dict[str, int] = Field(default_factory=dict)
    # vendor: from the reply's usage; stub: record mode's estimate; proxy_count: counted by the
    # proxy's tokenizer (no usage came back); partial: input from the vendor, output counted.
    source: TokenSource = "none"


class Timing(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: float  # epoch seconds when the request was fully received
    first_byte: float | None = None  # when the reply's first byte was ready to send
    end: float | None = None


class Rewrite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str
    before: object = None
    after: object = None


# The flag a record carries when the proxy could not store one of its bodies (a full disk): the
# record is whole, the body is not in the pack. Keyed by the record field that stays None.
UNSTORED_FLAGS = {
    "request_body": "request_body_unstored",
    "response_hash": "response_body_unstored",
}


class CallRecord(RunDirModel):
    schema_: Literal[1] = Field(CALL_SCHEMA, alias="schema")
    run_id: str
    seq: int  # order in which calls finished in this run
    mode: Literal["record", "live", "replay"]
    arm: str
    turn: int | None = None
    item: str | None = None
    # "ingest" for a call made while the arm ingested a history session (seam v2); absent
    # otherwise, so the lines of a run without ingestion are as before.
    phase: Literal["ingest"] | None = None
    purpose: str
    vendor: str
    route: str  # e.g. "anthropic.messages", or the raw path when no route matched
    method: str
    path: str
    model_requested: str | None = None
    model_served: str | None = None
    stream: bool = False
    status: int
    outcome: Outcome
    tokens: Tokens = Field(default_factory=Tokens)
    request_hash: str  # canonical masked request (rundir.calls.masking)
    request_body: str | None = None  # SHA-256 of the raw request body in bodies/
    response_hash: str | None = None  # SHA-256 of the response body, also its key in bodies/
    response_content_type: str | None = None
    response_chunks: list[int] | None = None  # byte length of each streamed chunk, for replay
    timing: Timing
    cost_usd: Decimal = Decimal(0)  # exact; serialised as a string
    reserved_usd: Decimal = Decimal(0)  # live: the worst case reserved before forwarding
    flags: list[str] = Field(default_factory=list)
    rewrites: list[Rewrite] = Field(default_factory=list)
    error: str | None = None
    # A reuse hit (issue 25 item 3): the seq of the leader's call whose reply this call was
    # answered with (no vendor call, cost 0); None for every other call (and left off the line).
    reuse_of: int | None = None

    def to_line(self) -> str:
        left_out = {"phase"} if self.phase is None else set()
        if self.reuse_of is None:
            left_out.add("reuse_of")
        return self.model_dump_json(by_alias=True, exclude_none=False, exclude=left_out) + "\n"


class CallLogError(RuntimeError):
    """The call log could not be written; the proxy must stop serving calls."""


class CallLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the log
        self._lock = threading.Lock()
        self._dirty = False
        self._seq = self._count_existing()

    def _count_existing(self) -> int:
        # A resumed run keeps numbering where the file left off.
        with open(self.path, "rb") as f:
            return sum(1 for _ in f)

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def append(self, record: CallRecord) -> None:
        line = record.to_line()
        try:
            with self._lock:
                self._file.write(line)
                self._file.flush()
                self._dirty = True
        except (OSError, ValueError) as e:
            raise CallLogError(f"cannot write call log {self.path}: {e}") from e

    def sync(self) -> None:
        """Make everything appended so far durable (called from a background thread)."""
        with self._lock:
            if not self._dirty or self._file.closed:
                return
            self._dirty = False
            fd = self._file.fileno()
        try:
            os.fsync(fd)
        except OSError as e:
            raise CallLogError(f"cannot fsync call log {self.path}: {e}") from e

    def close(self) -> None:
        self.sync()
        with self._lock:
            self._file.close()


def read_calls(path: Path) -> list[CallRecord]:
    """Every record of a call log, validated. A schema this version does not know is an error."""
    records = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(CallRecord.model_validate_json(line))
            except ValueError as e:
                raise ValueError(
                    f"{path}:{lineno}: not a call record of schema {CALL_SCHEMA}: {e}"
                ) from e
    return records
