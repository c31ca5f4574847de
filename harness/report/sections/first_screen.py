"""The report's first screen: what a researcher asks first (which arm is better, by how much, how
sure, at what cost), answered before section 1 in every format, then a table of contents.

Nothing here computes a new statistic. The outcome and the confirmatory rows are the ones section
7 computed (harness/report/confirmatory/section.py leaves them on the context, `Context.confirmed`);
the per-arm scores use the same cluster bootstrap as section 6 (items, or the T1 pack's histories,
as clusters); cost and latency come from `report.json`'s per-arm figures. So the first screen
cannot say something the sections below it do not.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from harness.report.confirmatory import interim_due
from harness.report.context import Confirmed, ConfirmedRow, Context
from harness.report.model import Section, money, seconds
from harness.report.reading import Progress
from harness.report.sections.drill_link import drill_href
from harness.stats import mean_interval

# Turn outcomes that are an arm's failure (infrastructure failures are dropped, not failures).
_FAILED = ("cut", "error", "stray_connection", "resource_limit", "wrong_model")


def effect(row: ConfirmedRow) -> str:
    """A confirmatory row's effect with its interval, + = the candidate better."""
    if row.estimate is None:
        return "-"
    if row.low is None or row.high is None:
        return f"{row.estimate:+.3f}"
    return f"{row.estimate:+.3f} [{row.low:+.3f}, {row.high:+.3f}]"


@dataclass
class Score:
    mean: float
    low: float
    high: float
    n: int  # judged answers

    def text(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass
class ArmHeadline:
    arm: str
    scores: dict[str, Score]  # "metric (scale)" -> its mean with the section 6 interval
    turns: int
    failed: int
    cost_per_turn: str
    p50_last_token: str


@dataclass
class FirstScreen:
    outcome: str | None  # GO, PORT, KILL, NO VERDICT, ...; None without an analysis plan
    rule: str | None  # why, as the plan's rules read it
    notes: list[str] = field(default_factory=list)  # stub answers, an unfinished run
    verdicts: list[ConfirmedRow] = field(default_factory=list)
    score_columns: list[str] = field(default_factory=list)
    arms: list[ArmHeadline] = field(default_factory=list)
    contents: list[tuple[int, str]] = field(default_factory=list)
    drill: bool = False  # drilldown.html is written beside the report (not in a public copy)

    def drill_link(self, row: int) -> str | None:
        """Where a verdict row links: the drill-down's rows of its metric."""
        if not self.drill:
            return None
        return drill_href(self.verdicts[row].metric)

    def headline_columns(self) -> list[str]:
        return (
            ["arm"]
            + [f"{c}, mean [95% interval]" for c in self.score_columns]
            + ["failed turns", "cost per turn", "p50 last token"]
        )

    def headline_rows(self) -> list[list[str]]:
        return [
            [a.arm]
            + [a.scores[c].text() if c in a.scores else "-" for c in self.score_columns]
            + [f"{a.failed} of {a.turns}", a.cost_per_turn, a.p50_last_token]
            for a in self.arms
        ]

    def verdict_columns(self) -> list[str]:
        return ["contrast", "endpoint", "metric", "effect (+ = candidate better) [interval]",
                "verdict"]  # fmt: skip

    def verdict_rows(self) -> list[list[str]]:
        return [[v.contrast, v.endpoint, v.metric, effect(v), v.status] for v in self.verdicts]

    def lines(self) -> list[str]:
        """The outcome and the notes as sentences, the same in every format."""
        out = []
        if self.outcome is not None:
            out.append(f"Outcome: {self.outcome} ({self.rule}).")
        else:
            out.append(
                "Outcome: none (no --analysis plan was given, so no confirmatory verdict was "
                "reached; section 7 has the exploratory comparisons)."
            )
        return out + self.notes


def first_screen(ctx: Context, sections: list[Section], progress: Progress | None) -> FirstScreen:
    confirmed: Confirmed | None = ctx.confirmed
    screen = FirstScreen(
        outcome=confirmed.outcome if confirmed else None,
        rule=confirmed.why if confirmed else None,
    )
    if confirmed is not None:
        screen.verdicts = list(confirmed.rows)
    if ctx.report.mode == "record":
        screen.notes.append(
            "Record mode: stubs answered every call at no cost, so every figure here (the "
            "outcome included) was computed on stub answers: it checks the study's plumbing, "
            "not the arms."
        )
    if progress is not None and not progress.finished:
        screen.notes.append(progress.sentence())
    if interim_due(ctx):
        # At an interim look the design reveals only stop or continue: no arm's score either.
        screen.notes.append(
            "Interim look: each axis reads only stop or continue (section 14); no score is "
            "shown until the final look."
        )
        scores: dict[str, dict[str, Score]] = {}
    else:
        screen.score_columns, scores = _scores(ctx)
    for name, arm in sorted(ctx.report.arms.items()):
        cost = "-" if arm.cost_per_turn is None else money_short(arm.cost_per_turn.mean)
        last = arm.last_token
        screen.arms.append(
            ArmHeadline(
                arm=name,
                scores=scores.get(name, {}),
                turns=arm.turns,
                failed=sum(arm.outcomes.get(o, 0) for o in _FAILED),
                cost_per_turn=cost,
                p50_last_token=seconds(last.p50_s, last.p50_censored),
            )
        )
    screen.contents = [(s.number, s.title) for s in sections]
    screen.drill = not ctx.anon.public and ctx.inputs.judgments is not None
    return screen


def money_short(value: float) -> str:
    return money(Decimal(str(round(value, 6))))


def _scores(ctx: Context) -> tuple[list[str], dict[str, dict[str, Score]]]:
    """Per arm and per (metric, scale), the mean of its kept judgments with the section 6
    interval: a metric's families pooled, each metric on its own scale."""
    from harness.report.sections.verdicts import cluster_of, kept_judgments

    grouped: dict[str, dict[str, list[tuple[str, str, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for j in kept_judgments(ctx):
        # Keyed as section 6 sorts its units, so one family gives section 6's interval exactly.
        unit = str((j.item, j.turn))
        grouped[f"{j.metric} ({j.scale})"][j.arm].append((unit, j.item, j.value))
    out: dict[str, dict[str, Score]] = defaultdict(dict)
    for column, arms in grouped.items():
        for arm, rows in arms.items():
            rows.sort()
            iv = mean_interval(
                [v for _, _, v in rows],
                [cluster_of(ctx, i) for _, i, _ in rows],
                ctx.resamples,
                ctx.seed,
                0.95,
            )
            out[arm][column] = Score(iv.estimate, iv.low, iv.high, len(rows))
    return sorted(grouped), out
