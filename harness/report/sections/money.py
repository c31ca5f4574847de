"""Sections 8-11: cost, latency, the determinism gate, the spend ledger."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from harness.report import charts
from harness.report.context import Context
from harness.report.figures import turn_costs
from harness.report.model import Section, Table, money, seconds
from harness.report.sections import ceilings
from harness.report.sections.judging import stability
from harness.report.sections.netlatency import net_latency
from harness.report.sections.reuse import reuse_line
from ledger.prices import TokenCounts, cost


def cost_section(ctx: Context, with_charts: bool) -> Section:
    s = Section(8, read=ctx.run_files("calls.jsonl", "turns.jsonl") + ctx.input_file("prices"))
    s.read += ctx.input_file("header")
    rows = []
    for name, arm in ctx.report.arms.items():
        per_turn = arm.cost_per_turn
        rows.append(
            [
                name,
                str(arm.calls),
                str(arm.input_tokens),
                str(arm.output_tokens),
                str(arm.cache_read_tokens),
                str(arm.cache_write_tokens),
                str(arm.reasoning_tokens),
                money(arm.cost_usd),
                money(arm.cost_usd_dropped),
                "-" if per_turn is None else f"${per_turn.mean:.6f}",
                "-" if per_turn is None else f"[${per_turn.low:.6f}, ${per_turn.high:.6f}]",
            ]
        )
    columns = ["arm", "calls", "input", "output", "cache read", "cache write", "reasoning",
               "cost", "of which dropped items", "mean $/turn", "95% interval"]  # fmt: skip
    s.tables.append(Table(columns, rows))
    s.paragraphs.append(
        f"Total booked in the call log: {money(ctx.report.total_cost_usd)} (every call, dropped "
        "items included). Input excludes cache reads and writes; output includes reasoning."
    )
    named = str(ctx.inputs.header.get("purpose") or "main")
    shares = [
        [name, purpose, str(p.calls), f"{p.share:.1%}", money(p.cost_usd)]
        for name, arm in ctx.report.arms.items()
        for purpose, p in arm.purposes.items()
    ]
    s.tables.append(Table(["arm", "purpose", "calls", "share of calls", "cost"], shares))
    share = {
        n: a.purposes[named].share if named in a.purposes else 0.0
        for n, a in ctx.report.arms.items()
    }
    s.paragraphs.append(
        f"Share of `{named}` calls: " + ", ".join(f"{n} {v:.1%}" for n, v in share.items()) + "."
    )
    s.paragraphs.append(counterfactual(ctx))
    s.paragraphs.append(reuse_line(ctx))  # follower calls answered with the leader's reply
    ceilings.add_to_cost_section(ctx, s)
    if with_charts:
        costs = turn_costs(ctx.data.calls)
        dropped = set(ctx.report.dropped_items)
        per_arm: dict[str, list[float]] = defaultdict(list)
        for t in ctx.data.turns:
            if t.item not in dropped:
                per_arm[t.arm].append(float(costs.get((t.arm, t.item, t.turn), Decimal(0))))
        s.chart = charts.cost_chart({n: per_arm.get(n, []) for n in ctx.report.arms})
    return s


def counterfactual(ctx: Context) -> str:
    """What caching did: the same tokens repriced with no cache at all, and, for a study-declared
    static prefix, with that prefix read from the cache on every call after an arm's first."""
    prices = ctx.inputs.prices
    if prices is None:
        return "The caching counterfactual: not run (no --prices)."
    prefix = int(ctx.inputs.header.get("static_prefix_tokens") or 0)
    actual = no_cache = prefixed = Decimal(0)
    unpriced = 0
    seen_arm: set[str] = set()
    for c in ctx.data.calls:
        try:
            price = prices.model(c.model_served or c.model_requested or "")
        except Exception:
            unpriced += 1
            continue
        t = c.tokens
        cw5m = t.cache_write - t.cache_write_1h
        real = TokenCounts(input=t.input, output=t.output, cache_read=t.cache_read,
                           cache_write_5m=cw5m, cache_write_1h=t.cache_write_1h,
                           reasoning=t.reasoning)  # fmt: skip
        flat = TokenCounts(input=real.prompt, output=t.output, reasoning=t.reasoning)
        actual += cost(price, real)
        no_cache += cost(price, flat)
        moved = min(prefix, t.input)
        first = c.arm not in seen_arm
        seen_arm.add(c.arm)
        cached = TokenCounts(
            input=t.input - moved,
            output=t.output,
            cache_read=t.cache_read + (0 if first else moved),
            cache_write_5m=cw5m + (moved if first else 0),
            cache_write_1h=t.cache_write_1h,
            reasoning=t.reasoning,
        )
        prefixed += cost(price, cached)
    text = (
        f"The caching counterfactual: these tokens cost {money(actual)} at --prices; with no "
        f"cache at all they would cost {money(no_cache)}"
    )
    if prefix:
        text += f"; with the declared static prefix of {prefix} tokens cached, {money(prefixed)}"
    else:
        text += " (no `static_prefix_tokens` in --header: no static-prefix figure)"
    if unpriced:
        text += f". {unpriced} call(s) name a model the table lacks and are not in these figures"
    return text + "."


def latency_section(ctx: Context, with_charts: bool) -> Section:
    s = Section(9, read=ctx.run_files("turns.jsonl", "calls.jsonl", "bodies/pack.bin"))
    rows = []
    for name, arm in ctx.report.arms.items():
        f, last, size = arm.first_token, arm.last_token, arm.response_bytes
        rows.append(
            [
                name,
                str(last.n),
                str(last.cut),
                seconds(f.p50_s, f.p50_censored),
                seconds(f.p95_s, f.p95_censored),
                seconds(f.p99_s, f.p99_censored),
                seconds(f.max_s, f.max_censored),
                seconds(last.p50_s, last.p50_censored),
                seconds(last.p95_s, last.p95_censored),
                seconds(last.p99_s, last.p99_censored),
                seconds(last.max_s, last.max_censored),
                "-" if size.per_call_mean is None else f"{size.per_call_mean:.0f}",
                "-" if size.per_turn_mean is None else f"{size.per_turn_mean:.0f}",
            ]
        )
    columns = ["arm", "turns", "cut", "first token p50", "first token p95", "first token p99",
               "first token max", "last token p50", "last token p95", "last token p99",
               "last token max", "response bytes/call", "response bytes/turn"]  # fmt: skip
    s.tables.append(Table(columns, rows))
    net_table, floors = net_latency(ctx)
    s.tables.append(net_table)
    s.paragraphs.append(
        f"Measured at the seam with a monotonic timer; the deadline is {ctx.data.deadline_s:g} s. "
        "A turn cut at the deadline ranks above every completed turn: a percentile that lands "
        "on one reads as at least the deadline."
    )
    s.paragraphs.append(floors)
    if with_charts:
        dropped = set(ctx.report.dropped_items)
        done: dict[str, list[float]] = defaultdict(list)
        cut: dict[str, int] = defaultdict(int)
        for t in ctx.data.turns:
            if t.item in dropped:
                continue
            if t.outcome == "cut":
                cut[t.arm] += 1
            elif t.outcome == "done" and t.last_token_s is not None:
                done[t.arm].append(t.last_token_s)
        per_arm = {n: done.get(n, []) for n in ctx.report.arms}
        s.chart = charts.latency_chart(per_arm, cut, ctx.data.deadline_s)
    return s


def gate_section(ctx: Context) -> Section:
    s = Section(10, read=ctx.input_file("gate") + ctx.input_file("judgments"))
    gate = ctx.inputs.gate
    texts, tables = stability(ctx)
    if gate is None and ctx.inputs.judgment_set is None:
        s.not_run = "no --gate was given; the stability check: not run (no judgment set)"
        return s
    if gate is None:
        s.paragraphs.append("The determinism gate: not run (no --gate was given).")
    else:
        counts = gate.get("counts") or {}
        s.paragraphs.append(
            f"The gate {'PASSED' if gate.get('passed') else 'FAILED'}: two record runs from fresh "
            f"arms compared {counts.get('calls_compared', 0)} calls, "
            f"{counts.get('calls_matching', 0)} the same, {counts.get('divergences', 0)} "
            f"divergence(s), {counts.get('reordered_turns', 0)} turn(s) reordered only."
        )
        for why in gate.get("why") or []:
            s.paragraphs.append(f"Why it failed: {why}")
        s.paragraphs.append(f"Masked body paths: {', '.join(gate.get('masks') or []) or 'none'}.")
    s.paragraphs += texts
    s.tables += tables
    return s


def ledger_section(ctx: Context, with_charts: bool) -> Section:
    s = Section(11, read=ctx.input_file("ledger"))
    if ctx.inputs.given("ledger") is None:
        s.not_run = "no --ledger was given"
        return s
    if ctx.inputs.ledger_problems:
        s.paragraphs.append("The ledger's hash chain is BROKEN; no totals are shown:")
        s.paragraphs += ctx.inputs.ledger_problems
        return s
    state = ctx.inputs.ledger
    assert state is not None
    rows, bars = [], {}
    for name, stage in sorted(state.stages.items()):
        spend, reserved = state.stage_spend(name), state.stage_reserved(name)
        bars[name] = (spend, reserved, stage.cap_usd)
        rows.append([name, money(stage.cap_usd), money(spend), money(reserved), str(stage.refused)])
    s.tables.append(Table(["stage", "cap", "spend (with factors)", "open", "refused runs"], rows))
    ours = set(ctx.report.run_ids)
    runs = [
        [ctx.anon.run(r.run_id), r.stage, r.state, money(r.computed_usd), money(r.charge_usd)]
        for r in state.runs.values()
        if r.run_id in ours
    ]
    s.tables.append(Table(["run", "stage", "state", "computed", "counts against the cap"], runs))
    s.paragraphs.append(
        f"{state.entries} entries, head {state.head[:16]}; unreconciled spend counts at 1.5x."
    )
    if with_charts and bars:
        s.chart = charts.ledger_chart(bars)
    return s
