"""`harness report RUN_DIR`: what a study run measured, per arm, from its own files.

Read-only over turns.jsonl, calls.jsonl and egress.jsonl (no proxy, no key, no network), so it
works on any copy of a run, finished, stopped or resumed. Per arm: turn outcomes, first- and
last-token latency (median and 95th percentile, over the turns that produced a token), calls,
tokens and cost (exact decimals, as the call log booked them), and refused connections. Written to
`report.json` next to the run's files, and printed as a table.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from harness.errors import HarnessError
from harness.turnlog import TurnRecord, read_turns
from proxy.calllog import CallRecord, read_calls

REPORT_SCHEMA = 1


class Latency(BaseModel):
    p50_s: float | None = None
    p95_s: float | None = None
    n: int = 0


class ArmReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: int = 0
    outcomes: dict[str, int] = Field(default_factory=dict)
    first_token: Latency = Field(default_factory=Latency)
    last_token: Latency = Field(default_factory=Latency)
    calls: int = 0
    call_outcomes: dict[str, int] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    stray_connections: int = 0


class RunReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(REPORT_SCHEMA, alias="schema")
    run_id: str
    mode: str
    arms: dict[str, ArmReport]
    total_cost_usd: Decimal
    unattributed_calls: int = 0  # calls no arm's listener took (none in a study run)


def build_report(run_dir: Path) -> RunReport:
    header = _header(run_dir)
    turns = read_turns(run_dir / "turns.jsonl")
    calls_path = run_dir / "calls.jsonl"
    try:
        calls = read_calls(calls_path) if calls_path.exists() else []
    except ValueError as e:
        raise HarnessError(f"{calls_path}: {e}", hint="run `harness audit` on this run") from None
    names = list((header.get("study") or {}).get("arms") or [])
    names += sorted({t.arm for t in turns} - set(names))
    arms = {name: _arm(name, turns, calls) for name in names}
    for entry in _egress(run_dir):
        arm = arms.get(str(entry.get("arm")))
        if arm is not None:
            arm.stray_connections += 1
    return RunReport(
        run_id=str(header.get("run_id", run_dir.name)),
        mode=str(header.get("mode", "?")),
        arms=arms,
        total_cost_usd=sum((c.cost_usd for c in calls), Decimal(0)),
        unattributed_calls=sum(c.arm not in arms for c in calls),
    )


def write_report(run_dir: Path, report: RunReport) -> Path:
    path = run_dir / "report.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(report.model_dump_json(by_alias=True, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def render(report: RunReport) -> str:
    """A plain-text table: one line per arm."""
    head = (
        f"{'arm':<16} {'turns':>5} {'done':>5} {'cut':>4} {'error':>5} {'infra':>5} "
        f"{'first p50':>9} {'last p50':>8} {'last p95':>8} {'calls':>5} {'cost USD':>12} "
        f"{'stray':>5}"
    )
    lines = [f"run {report.run_id} ({report.mode})", head]
    for name, arm in report.arms.items():
        out = arm.outcomes
        lines.append(
            f"{name:<16} {arm.turns:>5} {out.get('done', 0):>5} {out.get('cut', 0):>4} "
            f"{out.get('error', 0):>5} {out.get('infra_failed', 0):>5} "
            f"{_seconds(arm.first_token.p50_s):>9} {_seconds(arm.last_token.p50_s):>8} "
            f"{_seconds(arm.last_token.p95_s):>8} {arm.calls:>5} {arm.cost_usd:>12} "
            f"{arm.stray_connections:>5}"
        )
    lines.append(f"total cost USD {report.total_cost_usd}")
    return "\n".join(lines)


def _arm(name: str, turns: list[TurnRecord], calls: list[CallRecord]) -> ArmReport:
    mine = [t for t in turns if t.arm == name]
    billed = [c for c in calls if c.arm == name]
    return ArmReport(
        turns=len(mine),
        outcomes=dict(Counter(t.outcome for t in mine)),
        first_token=_latency([t.first_token_s for t in mine]),
        last_token=_latency([t.last_token_s for t in mine]),
        calls=len(billed),
        call_outcomes=dict(Counter(c.outcome for c in billed)),
        input_tokens=sum(c.tokens.input for c in billed),
        output_tokens=sum(c.tokens.output for c in billed),
        cache_read_tokens=sum(c.tokens.cache_read for c in billed),
        cost_usd=sum((c.cost_usd for c in billed), Decimal(0)),
    )


def _latency(values: list[float | None]) -> Latency:
    seen = np.array([v for v in values if v is not None], dtype=float)
    if not seen.size:
        return Latency()
    p50, p95 = np.percentile(seen, [50, 95])
    return Latency(p50_s=round(float(p50), 4), p95_s=round(float(p95), 4), n=int(seen.size))


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def _header(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise HarnessError(
            f"{run_dir} is not a run directory (no run.json)",
            hint="give a directory under --run-dir, e.g. runs/<run-id>",
        ) from None
    except (OSError, ValueError) as e:
        raise HarnessError(f"cannot read {path}: {e}") from None


def _egress(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "egress.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
