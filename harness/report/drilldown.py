"""drilldown.html: the per-item view behind sections 6 and 7, one table per family, one row per
judged turn: each arm's answer, the judges' votes and the outcome, traced to where it was read.

Item ids and answers are private, so a public copy (`--public`) writes no drill-down. The page is
rendered by Jinja2 with autoescape and the report's own Content-Security-Policy (no script, no
request), so an answer holding markup stays text.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness.report.context import Context
from harness.report.render import _HTML
from harness.report.verdicts import family_of, kept_pairs
from rundir.atomic import write_atomic


@dataclass
class Row:
    item: str
    turn: str
    metric: str
    scale: str
    answers: list[tuple[str, str]]  # (arm, its answer)
    votes: str
    outcome: str
    source: str


@dataclass
class Family:
    name: str
    rows: list[Row] = field(default_factory=list)


def drilldown(ctx: Context) -> list[Family]:
    text = {(t.arm, t.item, t.turn): t.text or "" for t in ctx.data.turns}
    dropped = set(ctx.report.dropped_items)
    families: dict[str, list[Row]] = defaultdict(list)
    for j in ctx.inputs.judgments or []:
        if j.item in dropped:
            continue
        answer = text.get((j.arm, j.item, j.turn), "-") if j.turn is not None else "-"
        outcome = f"{j.arm}: {j.value:g}" + (f" (axis {j.axis})" if j.axis else "")
        families[family_of(ctx, j.item, j.family)].append(
            Row(
                j.item,
                _turn(j.turn),
                j.metric,
                j.scale,
                [(j.arm, answer)],
                j.votes or "-",
                outcome,
                j.source,
            )
        )
    for p in kept_pairs(ctx):
        answers = [(arm, text.get((arm, p.item, p.turn), "-")) for arm in (p.arm_a, p.arm_b)]
        winner = p.arm_a if p.value > 0.5 else p.arm_b if p.value < 0.5 else "tie"
        outcome = f"{p.arm_a} share {p.value:g}: {winner} (axis {p.axis})"
        families[family_of(ctx, p.item, p.family)].append(
            Row(p.item, _turn(p.turn), p.metric, p.scale, answers, p.votes, outcome, p.source)
        )
    return [
        Family(name, sorted(rows, key=lambda r: (r.item, r.turn, r.metric, r.outcome)))
        for name, rows in sorted(families.items())
    ]


def _turn(turn: int | None) -> str:
    return "-" if turn is None else str(turn)


def write_drilldown(ctx: Context, path: Path, title: str) -> Path | None:
    if ctx.anon.public or ctx.inputs.judgments is None:
        return None
    page = _HTML.get_template("drilldown.html.j2").render(title=title, families=drilldown(ctx))
    write_atomic(path, page)
    return path
