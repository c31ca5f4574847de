"""The study's output guard (issue 25 item 6, `[guard]` in study.toml): one check the harness runs
on every arm's final text of every turn, so each arm's reply is judged by the same rule, whatever
the arm does inside.

    [guard]
    command = ["python", "guard.py"]   # run in the study's folder; the turn's text on stdin
    timeout_s = 30

The command prints one JSON object as the last line of its stdout: `{"pass": true}` or
`{"pass": false, "reason": "..."}`. Its verdict is recorded on the turn (turns.jsonl `guard`:
pass | fail | error, `guard_reason`); a guard that exits non-zero, times out, or prints anything
else is an `error` verdict, never a pass (fail closed). The turn's outcome is left as the arm
made it: the verdict is a finding beside it, read by the report and the audit. It gets the turn's
arm, item and turn in HARNESS_ARM, HARNESS_ITEM and HARNESS_TURN.

Confined and metered like an arm (issue 34 item 2): the guard's environment holds none of the
study's keys (only PATH and the like, as an arm's, and placeholder keys), and the official SDKs'
variables point at the proxy listener of the arm whose text it checks (OPENAI_BASE_URL, ...), so
a model call it makes is metered, capped, logged in calls.jsonl and booked in the ledger like any
other. Its purpose is `guard` by the harness's word, not the guard's: while it runs the orchestrator
tells the proxy (phase `guard`, harness/run/control/proxy_control.py) and every call on that
listener is booked as purpose guard on the turn it checks, whatever X-Harness-Purpose it sends or
omits (HARNESS_PURPOSE says so); the sampling rewrite never touches it. An arm's own call sent on
its listener in that window is booked as guard too (the arm's turn is over by then). A
Python guard also gets the local arms' socket guard: any other connection is refused inside it
and logged in the run's `egress/guard/egress.jsonl` (its verdict then most likely `error`). It
runs on the host, whatever the backend: not a sandbox (a non-Python guard is not held).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["pass", "fail", "error"]
REASON_MAX = 500  # a guard's reason is a finding, not a transcript
GUARD_PURPOSE = "guard"
# What a guard inherits from the harness, as an arm does: enough to run, nothing secret.
PASSTHROUGH_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV", "PYTHONPATH", "TZ")


class GuardSpec(BaseModel):
    """`[guard]`: the command that checks each turn's final text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: list[str] = Field(min_length=1)
    timeout_s: float = Field(30, gt=0, le=600)


@dataclass(frozen=True)
class GuardResult:
    verdict: Verdict
    reason: str | None = None


def guard_env(
    arm: str, item: str, turn: int, route: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The guard's environment: the harness's own but for anything secret (an arm's
    passthrough only), the turn it checks, and `route` (harness/run/control/guard_route.py: the SDK
    variables pointing at the arm's proxy listener behind placeholder keys, and the socket
    guard that holds a Python guard to it) laid over it."""
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env |= {"HARNESS_ARM": arm, "HARNESS_ITEM": item, "HARNESS_TURN": str(turn)}
    env |= {"HARNESS_PURPOSE": GUARD_PURPOSE, "PYTHONUNBUFFERED": "1"}
    return env | dict(route or {})


def run_guard(
    spec: GuardSpec,
    cwd: Path,
    text: str,
    arm: str,
    item: str,
    turn: int,
    route: Mapping[str, str] | None = None,
) -> GuardResult:
    """Run the guard on one turn's text and read its verdict."""
    env = guard_env(arm, item, turn, route)
    try:
        done = subprocess.run(
            spec.command,
            input=text.encode("utf-8"),
            capture_output=True,
            cwd=cwd,
            env=env,
            timeout=spec.timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return GuardResult("error", f"the guard did not finish within {spec.timeout_s:g} s")
    except OSError as e:
        return GuardResult("error", f"the guard could not be started: {e}"[:REASON_MAX])
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return GuardResult("error", f"the guard exited {done.returncode}: {tail[0]}"[:REASON_MAX])
    return _verdict(done.stdout.decode("utf-8", "replace"))


def _verdict(stdout: str) -> GuardResult:
    lines = stdout.strip().splitlines()
    try:
        reply = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict) or not isinstance(reply.get("pass"), bool):
        return GuardResult("error", 'the guard must print {"pass": true|false} as its last line')
    reason = reply.get("reason")
    reason = str(reason)[:REASON_MAX] if reason is not None else None
    return GuardResult("pass" if reply["pass"] else "fail", reason)
