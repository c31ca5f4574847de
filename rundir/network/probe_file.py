"""`probe.json`: the day's compatibility probe and the route it chose for an arm that reaches an
Anthropic subject through Anthropic's OpenAI-compatible endpoint (issue 25 item 8).

`harness probe STUDY` writes it next to study.toml (and into a run directory with --run); the arm
reads `route` ("compat": `/anthropic/v1/chat/completions`; "messages": the Messages API), and the
report prints a fallback to "messages" as a deviation (section 12). Arms import nothing of ours:
they read the JSON's `route` field themselves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from rundir.atomic import fsync_dir
from rundir.errors import RunDirError
from rundir.model import RunDirModel

PROBE_FILE = "probe.json"
PROBE_SCHEMA: Literal[1] = 1
ProbeRoute = Literal["compat", "messages"]


class ProbeCheck(RunDirModel):
    name: str  # "valid_call", "thinking_honoured", "effort_honoured"
    passed: bool
    detail: str  # what was sent and what came back, in one line


class ProbeDecision(RunDirModel):
    schema_: Literal[1] = Field(PROBE_SCHEMA, alias="schema")
    probed: str  # when (ISO 8601, UTC)
    base_url: str  # the Anthropic base the probe called (a live proxy's, so it is metered)
    model: str
    checks: list[ProbeCheck]
    route: ProbeRoute  # "compat" only when every check passed

    @property
    def fell_back(self) -> bool:
        return self.route == "messages"

    def reasons(self) -> str:
        failed = [f"{c.name}: {c.detail}" for c in self.checks if not c.passed]
        return "; ".join(failed) or "no check failed"


def write_probe(path: Path, decision: ProbeDecision) -> None:
    """Write atomically and fsync: the arm and the report both read the decision later."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    with tmp.open("w") as f:
        f.write(json.dumps(decision.model_dump(by_alias=True), indent=2) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def read_probe(path: Path) -> ProbeDecision | None:
    """The decision in `path`, None when there is none; a damaged file is an error, not None."""
    if not path.is_file():
        return None
    try:
        return ProbeDecision.model_validate_json(path.read_bytes())
    except ValidationError as e:
        raise RunDirError(f"{path}: not a probe decision: {e.errors()[0]['msg']}") from None
