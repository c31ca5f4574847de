"""The candidates against the reference (C against B): the ceiling readings, the sentiment call's
share of a candidate's latency, and the caching counterfactual of its main calls.

Who is compared: `[ceilings] reference = "B"`, `candidates = ["C0", "C1"]` in the report's
--header (optional `sentiment = "sentiment"`, the purpose of the sentiment call, and `main`,
that of the main calls), else the study's `[coupling] order` (its first arm the reference, the
rest the candidates), read from the study file run.json names when its SHA-256 is still the
run's. Neither: "not run".

The ceilings (issue 25), each a reading with the figures it compares:
- mean $ per turn at most 1.30x the reference's, every call an item's turn caused charged to it
  (its ingestion and turn-less calls of that item included; calls of no item are counted apart);
- first-token latency at most the reference's + 200 ms at the median and + 500 ms at p95;
- last-token p95 at most 1.25x the reference's;
- failure rate (turns not done, dropped items aside) at most 1 point above the reference's.
A percentile that lands on a cut turn is at least the deadline: a reading that then cannot be
told says so instead of passing or failing.
"""

from __future__ import annotations

import tomllib
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.report.context import Context
from harness.report.figures import Latency
from harness.report.model import Section, Table, money
from harness.report.reading import read_file
from ledger.errors import LedgerError
from ledger.prices import TokenCounts, cost
from rundir.calls import CallRecord
from rundir.runs import file_sha256

COST_RATIO = Decimal("1.30")
FIRST_P50_S, FIRST_P95_S = 0.200, 0.500
LAST_P95_RATIO = 1.25
FAILURE_POINTS = 0.01


@dataclass
class Roles:
    reference: str
    candidates: list[str]
    source: str  # where they were read
    sentiment: str = "sentiment"
    main: str = "main"
    study_file: bool = False  # read from the study file (named in the section's files)


def roles(ctx: Context) -> Roles | None:
    table = ctx.inputs.header.get("ceilings")
    if isinstance(table, dict) and table.get("reference"):
        return Roles(
            str(table["reference"]),
            [str(c) for c in table.get("candidates") or []],
            "--header [ceilings]",
            str(table.get("sentiment") or "sentiment"),
            str(table.get("main") or ctx.inputs.header.get("purpose") or "main"),
        )
    order = _coupling_order(ctx.data.study)
    if order:
        return Roles(order[0], order[1:], "the study's [coupling] order", study_file=True)
    return None


def _coupling_order(study: dict[str, Any]) -> list[str]:
    """The study file's [coupling] order, only from the very file the run ran (same SHA-256)."""
    path = Path(str(study.get("study_path") or ""))
    if not study.get("study_path") or not path.is_file():
        return []
    if file_sha256(path) != study.get("study_sha256"):
        return []
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    order = (doc.get("coupling") or {}).get("order")
    return [str(a) for a in order] if isinstance(order, list) and len(order) > 1 else []


@dataclass
class ArmTurns:
    turns: int = 0
    failed: int = 0
    cost_usd: Decimal = Decimal(0)
    uncharged_calls: int = 0

    @property
    def per_turn(self) -> Decimal | None:
        return self.cost_usd / self.turns if self.turns else None

    @property
    def failure_rate(self) -> float | None:
        return self.failed / self.turns if self.turns else None


def charged_to_turns(ctx: Context) -> dict[str, ArmTurns]:
    """Per arm: its turns on kept items, how many failed, and every call of those items."""
    dropped = set(ctx.report.dropped_items)
    arms: dict[str, ArmTurns] = defaultdict(ArmTurns)
    ran: set[tuple[str, str]] = set()
    for t in ctx.data.turns:
        if t.item in dropped:
            continue
        a = arms[t.arm]
        a.turns += 1
        a.failed += t.outcome != "done"
        ran.add((t.arm, t.item))
    for c in ctx.data.calls:
        if c.item is not None and (c.arm, c.item) in ran:
            arms[c.arm].cost_usd += c.cost_usd
        elif c.item is None or c.item not in dropped:
            arms[c.arm].uncharged_calls += 1
    return dict(arms)


def _latency_reading(c: float | None, c_cut: bool, bound: float | None, b_cut: bool) -> str:
    if c is None or bound is None:
        return "no completed turns"
    if b_cut and not c_cut:
        return "within (the reference's is at least the deadline)"
    if c_cut:
        return "cannot tell (both at least the deadline)" if b_cut else "ABOVE (cut turns)"
    return "within" if c <= bound else "ABOVE"


def _usd(value: Decimal) -> str:
    return money(value.quantize(Decimal("1e-8")))


def _s(value: float | None, cut: bool) -> str:
    if value is None:
        return "-"
    return f"≥ {value * 1000:.0f} ms" if cut else f"{value * 1000:.0f} ms"


def readings(ctx: Context, who: Roles) -> Table:
    """One row per candidate and ceiling: the candidate's figure, the bound from the reference's,
    and the reading."""
    arms = charged_to_turns(ctx)
    rows: list[list[str]] = []
    ref = arms.get(who.reference, ArmTurns())
    b = ctx.report.arms.get(who.reference)
    for name in who.candidates:
        cand = arms.get(name, ArmTurns())
        c = ctx.report.arms.get(name)
        bp, cp = ref.per_turn, cand.per_turn
        if bp is None or cp is None:
            rows.append([name, "mean $ per turn", "-", "-", "-", "no turns"])
        else:
            bound = bp * COST_RATIO
            rows.append([name, "mean $ per turn", _usd(bp), _usd(cp), f"≤ {_usd(bound)} (1.30x)",
                         "within" if cp <= bound else "ABOVE"])  # fmt: skip
        if b is not None and c is not None:
            rows += _latency_rows(name, b.first_token, c.first_token, b.last_token, c.last_token)
        br, cr = ref.failure_rate, cand.failure_rate
        if br is None or cr is None:
            rows.append([name, "failure rate", "-", "-", "-", "no turns"])
        else:
            limit = br + FAILURE_POINTS
            reading = "within" if cr <= limit + 1e-12 else "ABOVE"
            rows.append([name, "failure rate", f"{br:.1%}", f"{cr:.1%}", f"≤ {limit:.1%}", reading])
    columns = ["candidate", "ceiling", "reference's", "candidate's", "bound", "reading"]
    return Table(columns, rows)


def _latency_rows(name: str, bf: Latency, cf: Latency, bl: Latency, cl: Latency) -> list[list[str]]:
    rows = []
    for label, how, b, c, bound in (
        ("first token p50", "+ 200 ms", (bf.p50_s, bf.p50_censored), (cf.p50_s, cf.p50_censored),
         None if bf.p50_s is None else bf.p50_s + FIRST_P50_S),
        ("first token p95", "+ 500 ms", (bf.p95_s, bf.p95_censored), (cf.p95_s, cf.p95_censored),
         None if bf.p95_s is None else bf.p95_s + FIRST_P95_S),
        ("last token p95", "1.25x", (bl.p95_s, bl.p95_censored), (cl.p95_s, cl.p95_censored),
         None if bl.p95_s is None else bl.p95_s * LAST_P95_RATIO),
    ):  # fmt: skip
        rows.append(
            [name, label, _s(*b), _s(*c),
             "-" if bound is None else f"≤ {_s(bound, b[1])} ({how})",
             _latency_reading(c[0], c[1], bound, b[1])]
        )  # fmt: skip
    return rows


def sentiment_share(ctx: Context, who: Roles) -> Table:
    """Per candidate with sentiment calls: the sentiment calls' time as a share of its turns'
    first-token latency (only the part before the turn's first main reply byte) and last-token
    latency, pooled over its completed turns (sum over sum)."""
    by_turn: dict[tuple[str, str, str, int], list[CallRecord]] = defaultdict(list)
    for c in ctx.data.calls:
        if c.item is not None and c.turn is not None and c.phase != "ingest":
            by_turn[(c.run_id, c.arm, c.item, c.turn)].append(c)
    rows = []
    for name in who.candidates:
        first_s = last_s = sent_first = sent_last = 0.0
        n = calls = 0
        for t in ctx.data.turns:
            if t.arm != name or t.outcome != "done" or t.first_token_s is None:
                continue
            if t.last_token_s is None:
                continue
            turn_calls = by_turn.get((t.run, t.arm, t.item, t.turn), [])
            sent = [c for c in turn_calls if c.purpose == who.sentiment and c.timing.end]
            mains = [c.timing.first_byte for c in turn_calls
                     if c.purpose == who.main and c.timing.first_byte]  # fmt: skip
            first_main = min(mains) if mains else None
            n += 1
            calls += len(sent)
            first_s += t.first_token_s
            last_s += t.last_token_s
            for c in sent:
                end = c.timing.end or c.timing.start
                sent_last += end - c.timing.start
                cut = end if first_main is None else min(end, first_main)
                sent_first += max(0.0, cut - c.timing.start)
        if not calls:
            rows.append([name, str(n), "0", "-", "-"])
            continue
        rows.append([name, str(n), str(calls), f"{sent_first / first_s:.1%}" if first_s else "-",
                     f"{sent_last / last_s:.1%}" if last_s else "-"])  # fmt: skip
    return Table(["candidate", "turns", f"`{who.sentiment}` calls", "share of first-token",
                  "share of last-token"], rows)  # fmt: skip


def main_call_counterfactual(ctx: Context, who: Roles) -> Table | str:
    """Each candidate's main calls at the price table as billed (cached tokens at the cache
    rates) and with every prompt token at the input rate (no cache)."""
    prices = ctx.inputs.prices
    if prices is None:
        return (
            f"The caching counterfactual of the candidates' `{who.main}` calls: not run "
            "(no --prices)."
        )
    rows = []
    for name in who.candidates:
        actual = flat = Decimal(0)
        n = unpriced = cached = 0
        for c in ctx.data.calls:
            if c.arm != name or c.purpose != who.main:
                continue
            try:
                price = prices.model(c.model_served or c.model_requested or "")
            except LedgerError:
                unpriced += 1
                continue
            t = c.tokens
            real = TokenCounts(input=t.input, output=t.output, cache_read=t.cache_read,
                               cache_write_5m=t.cache_write - t.cache_write_1h,
                               cache_write_1h=t.cache_write_1h, reasoning=t.reasoning)  # fmt: skip
            actual += cost(price, real)
            flat += cost(price, TokenCounts(input=real.prompt, output=t.output,
                                            reasoning=t.reasoning))  # fmt: skip
            n += 1
            cached += t.cache_read
        saved = f"{(flat - actual) / flat:.1%}" if flat else "-"
        rows.append([name, str(n), str(cached), money(actual), money(flat), saved,
                     str(unpriced)])  # fmt: skip
    columns = ["candidate", f"`{who.main}` calls", "cached tokens", "with cached tokens",
               "without caching", "caching saves", "unpriced calls"]  # fmt: skip
    return Table(columns, rows)


def add_to_cost_section(ctx: Context, s: Section) -> None:
    """Section 8: the readings (cost, latency, failures) of the candidates against the
    reference, and the caching counterfactual of their main calls, each naming its files."""
    who = roles(ctx)
    if who is None:
        s.paragraphs.append(
            "The ceilings of the candidates against the reference: not run (the study declares no "
            "reference: no `[ceilings]` in --header, no `[coupling] order` in the study)."
        )
        return
    if who.study_file:
        s.read.append(ctx.describe(read_file("study", Path(str(ctx.data.study["study_path"])))))
    s.paragraphs.append(
        f"The ceilings of {', '.join(who.candidates) or 'no candidate'} against the reference "
        f"{who.reference} (from {who.source}): mean $ per turn at most 1.30x, every call an "
        "item's turn caused charged to it (calls.jsonl by arm and item over turns.jsonl, dropped "
        "items aside); first-token latency at most + 200 ms at the median and + 500 ms at p95, "
        "last-token p95 at most 1.25x (turns.jsonl, a cut turn at least the deadline); failure "
        "rate (turns not done) at most 1 point above (turns.jsonl)."
    )
    s.tables.append(readings(ctx, who))
    uncharged = {n: a.uncharged_calls for n, a in charged_to_turns(ctx).items()}
    uncharged = {n: k for n, k in uncharged.items() if k}
    if uncharged:
        s.paragraphs.append(
            "Calls no turn caused (no item, or an item the arm ran no turn of), not in the mean: "
            + ", ".join(f"{n} {k}" for n, k in sorted(uncharged.items()))
            + "."
        )
    s.paragraphs.append(
        f"The `{who.sentiment}` calls' share of the candidates' latency (calls.jsonl timings "
        "over turns.jsonl latencies, completed turns, pooled): for the first token only the part "
        f"before the turn's first `{who.main}` reply byte counts."
    )
    s.tables.append(sentiment_share(ctx, who))
    counter = main_call_counterfactual(ctx, who)
    if isinstance(counter, str):
        s.paragraphs.append(counter)
    else:
        s.paragraphs.append(
            f"The caching counterfactual of the candidates' `{who.main}` calls (calls.jsonl "
            "tokens at --prices): as billed, and with every cached token at the input rate."
        )
        s.tables.append(counter)
