"""Per-arm figures of a run (`report.json`): outcomes, latency, calls, tokens, cost, sizes.

Two rules keep the comparison between arms fair:
- a turn cut at the deadline ranks above every completed turn in the latency percentiles
  (harness/report/figures/latency.py);
- an item that failed for infrastructure reasons (after its retries) on ANY arm is dropped from
  EVERY arm's outcomes, latency and per-turn cost, and counted (`dropped_items`): otherwise the
  arms that happened to run it would be compared on a different set of items.
Money is never dropped: an arm's `cost_usd` is every call it made, dropped items included
(`cost_usd_dropped` says how much of it), and `total_cost_usd` is the whole call log.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from harness.report.figures.guard_tally import GuardTally, guard_tally
from harness.report.figures.latency import Latency, latency
from harness.report.reading import RunData
from harness.stats import mean_interval
from rundir.calls import CallRecord
from rundir.turns import TurnRecord

REPORT_SCHEMA = 2  # 2: cut turns ranked above completed ones, infra-failed items dropped


class MeanInterval(BaseModel):
    mean: float
    low: float
    high: float
    n: int
    resamples: int
    seed: int


class PurposeShare(BaseModel):
    calls: int
    share: float  # of the arm's calls
    cost_usd: Decimal


class Sizes(BaseModel):
    """Response body bytes (what the arm had to wait for beside the latency)."""

    per_call_mean: float | None = None
    per_call_max: int | None = None
    per_turn_mean: float | None = None
    unknown_calls: int = 0  # calls whose response size the run's files do not give


class ArmReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: int = 0  # turns of the items every arm could run
    turns_dropped: int = 0  # turns of dropped items (infrastructure failures on some arm)
    outcomes: dict[str, int] = Field(default_factory=dict)
    first_token: Latency = Field(default_factory=Latency)
    last_token: Latency = Field(default_factory=Latency)
    calls: int = 0
    call_outcomes: dict[str, int] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    cost_usd_dropped: Decimal = Decimal(0)
    cost_per_turn: MeanInterval | None = None
    purposes: dict[str, PurposeShare] = Field(default_factory=dict)
    response_bytes: Sizes = Field(default_factory=Sizes)
    stray_connections: int = 0
    # The study's output guard on its turns and its own calls
    # (harness/report/figures/guard_tally.py).
    guard: GuardTally | None = None


class RunReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(REPORT_SCHEMA, alias="schema")
    run_id: str
    run_ids: list[str]
    mode: str
    deadline_s: float
    arms: dict[str, ArmReport]
    total_cost_usd: Decimal
    dropped_items: list[str] = Field(default_factory=list)
    unattributed_calls: int = 0  # calls no arm's listener took (none in a study run)


def dropped_items(turns: list[TurnRecord]) -> set[str]:
    return {t.item for t in turns if t.outcome == "infra_failed"}


def turn_costs(calls: list[CallRecord]) -> dict[tuple[str, str | None, int | None], Decimal]:
    costs: dict[tuple[str, str | None, int | None], Decimal] = defaultdict(Decimal)
    for c in calls:
        # An ingestion's calls (seam v2) carry the history session's index as their turn:
        # they are the item's ingestion cost (question rows), not its answer turn's.
        if c.phase != "ingest":
            costs[(c.arm, c.item, c.turn)] += c.cost_usd
    return costs


def response_size(call: CallRecord, sizes: dict[str, int]) -> int | None:
    if call.response_chunks is not None:
        return sum(call.response_chunks)
    if call.response_hash is None:
        return None
    return sizes.get(call.response_hash)


def build_report(data: RunData, *, resamples: int = 10_000, seed: int = 0) -> RunReport:
    dropped = dropped_items(data.turns)
    costs = turn_costs(data.calls)
    arms = {name: _arm(name, data, dropped, costs, resamples, seed) for name in data.arm_names}
    for entry in data.egress:
        arm = arms.get(str(entry.get("arm")))
        if arm is not None:
            arm.stray_connections += int(entry.get("count") or 1)  # a folded burst counts all
    return RunReport(
        run_id=str(data.header.get("run_id", data.run_dirs[0].name)),
        run_ids=[str(h.get("run_id", "?")) for h in data.headers],
        mode=str(data.header.get("mode", "?")),
        deadline_s=data.deadline_s,
        arms=arms,
        total_cost_usd=sum((c.cost_usd for c in data.calls), Decimal(0)),
        dropped_items=sorted(dropped),
        unattributed_calls=sum(c.arm not in arms for c in data.calls),
    )


def _arm(
    name: str,
    data: RunData,
    dropped: set[str],
    costs: dict[tuple[str, str | None, int | None], Decimal],
    resamples: int,
    seed: int,
) -> ArmReport:
    everything = [t for t in data.turns if t.arm == name]
    mine = [t for t in everything if t.item not in dropped]
    billed = [c for c in data.calls if c.arm == name]
    completed = [t for t in mine if t.outcome == "done"]
    cut = [t for t in mine if t.outcome == "cut"]
    # A cut turn that did produce its first token has a real first-token time; one that did not
    # ranks above every completed turn, like every cut turn does for the last token.
    first_done = [t.first_token_s for t in completed + cut if t.first_token_s is not None]
    first_cut = sum(t.first_token_s is None for t in cut)
    per_turn = [float(costs.get((name, t.item, t.turn), Decimal(0))) for t in mine]
    return ArmReport(
        turns=len(mine),
        turns_dropped=len(everything) - len(mine),
        outcomes=dict(Counter(t.outcome for t in mine)),
        first_token=latency(first_done, first_cut, data.deadline_s),
        last_token=latency(
            [t.last_token_s for t in completed if t.last_token_s is not None],
            len(cut),
            data.deadline_s,
        ),
        calls=len(billed),
        call_outcomes=dict(Counter(c.outcome for c in billed)),
        input_tokens=sum(c.tokens.input for c in billed),
        output_tokens=sum(c.tokens.output for c in billed),
        cache_read_tokens=sum(c.tokens.cache_read for c in billed),
        cache_write_tokens=sum(c.tokens.cache_write for c in billed),
        reasoning_tokens=sum(c.tokens.reasoning for c in billed),
        cost_usd=sum((c.cost_usd for c in billed), Decimal(0)),
        cost_usd_dropped=sum((c.cost_usd for c in billed if c.item in dropped), Decimal(0)),
        cost_per_turn=_mean_interval(per_turn, [t.item for t in mine], resamples, seed),
        purposes=_purposes(billed),
        response_bytes=_sizes(billed, data.response_bytes),
        guard=guard_tally(mine, billed),
    )


def _purposes(calls: list[CallRecord]) -> dict[str, PurposeShare]:
    counts = Counter(c.purpose for c in calls)
    spend: dict[str, Decimal] = defaultdict(Decimal)
    for c in calls:
        spend[c.purpose] += c.cost_usd
    return {
        purpose: PurposeShare(calls=n, share=round(n / len(calls), 4), cost_usd=spend[purpose])
        for purpose, n in sorted(counts.items())
    }


def _sizes(calls: list[CallRecord], sizes: dict[str, int]) -> Sizes:
    known = [(c, s) for c in calls if (s := response_size(c, sizes)) is not None]
    if not known:
        return Sizes(unknown_calls=len(calls))
    per_turn: dict[tuple[str | None, int | None], int] = defaultdict(int)
    for c, s in known:
        per_turn[(c.item, c.turn)] += s
    return Sizes(
        per_call_mean=round(sum(s for _, s in known) / len(known), 1),
        per_call_max=max(s for _, s in known),
        per_turn_mean=round(sum(per_turn.values()) / len(per_turn), 1),
        unknown_calls=len(calls) - len(known),
    )


def _mean_interval(
    values: list[float], clusters: list[str], resamples: int, seed: int
) -> MeanInterval | None:
    if not values:
        return None
    interval = mean_interval(values, clusters, resamples, seed, 0.95)
    return MeanInterval(
        mean=float(interval.estimate),
        low=float(interval.low),
        high=float(interval.high),
        n=len(values),
        resamples=int(interval.resamples),
        seed=int(interval.seed),
    )
