"""`rtt.jsonl`: round trips measured by the orchestrator, the floors the report subtracts.

One `RttProbe` per probe, appended as it is taken:
- `seam`: an arm's seam, `GET /health` repeated on one warm keep-alive connection (after a
  warm-up, so no TCP setup is in the samples), before the arm's first turn (`start`) and after
  its last (`end`). A turn's latency at the seam holds one such round trip.
- `upstream`: a vendor's host in live mode, TCP handshakes timed from the host (one SYN round
  trip each, no request sent, so a vendor sees and bills nothing). A call's time to first byte
  at the proxy holds at least one such round trip.
A probe that failed has no samples and says why (`error`); the report then falls back to the
fastest first byte the run saw, and says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import Field

from rundir.jsonlines import append_line, read_lines
from rundir.model import RunDirModel

RTT_SCHEMA: Literal[1] = 1

ProbeKind = Literal["seam", "upstream"]
ProbePhase = Literal["start", "end"]
ProbeMethod = Literal["http_keepalive", "tcp_connect"]


class RttProbe(RunDirModel):
    schema_: Literal[1] = Field(RTT_SCHEMA, alias="schema")
    run: str
    kind: ProbeKind
    target: str  # the arm (seam) or the vendor (upstream)
    phase: ProbePhase
    method: ProbeMethod
    time: str  # ISO 8601, when the probe began
    warmup: int = 0  # requests sent before the samples, not in them
    samples_s: list[float] = Field(default_factory=list)
    min_s: float | None = None
    median_s: float | None = None
    error: str | None = None  # why there are no samples


class RttLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, probe: RttProbe) -> None:
        # Opened per probe: a handful of probes per run, and no handle to leak on an early exit.
        append_line(self.path, probe)


def read_probes(path: Path) -> list[RttProbe]:
    if not path.exists():
        return []
    return [RttProbe.model_validate(json.loads(line)) for line in read_lines(path) if line.strip()]
