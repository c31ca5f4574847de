"""Sections 1-4, 12 and 13: who ran what, on which arms and items, what the report cannot tell,
and the hashes. Section 5 is in judging.py, 6-7 in verdicts.py, 8-11 in money.py."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

from harness.report.context import Context
from harness.report.figures import guard_table
from harness.report.model import NOT_RUN, Section, Table, money, plain
from harness.report.reading import ADDENDUM_NOW
from harness.report.sections import paper_trail
from harness.report.sections.identity import pins_table
from harness.report.sections.outcomes import outcomes_table, unturned_calls
from harness.report.sections.strays import refused_table, stray_turns


def identity(ctx: Context) -> Section:
    s = Section(1, read=ctx.run_files("run.json"))
    rows = []
    for h in ctx.data.headers:
        study = h.get("study") or {}
        manifest = h.get("manifest") or {}
        rows.append(
            [
                ctx.anon.run(str(h.get("run_id"))),
                str(h.get("mode")),
                str(h.get("started")),
                str(h.get("ended") or "unfinished"),
                str(study.get("isolation", "-")),
                str(study.get("clock_pinning", "-")),
                str(manifest.get("tool_version", "-")),
                str(manifest.get("tool_commit") or "-")[:12],
            ]
        )
    columns = ["run", "mode", "started", "ended", "isolation", "clock", "tool", "commit"]
    s.tables.append(Table(columns, rows))
    study = ctx.data.study
    s.paragraphs.append(
        f"Study `{study.get('name', '-')}`: study SHA-256 `{study.get('study_sha256', '-')}`, "
        f"items SHA-256 `{study.get('items_sha256', '-')}`, compose SHA-256 "
        f"`{study.get('compose_sha256') or '-'}`, seeds {plain(study.get('seeds') or {})}, "
        f"deadline {ctx.data.deadline_s:g} s per turn."
    )
    # The subject model, what the call log shows was called, the protocol's hashes (issue 29).
    s.paragraphs.append(paper_trail.subject_line(ctx))
    s.tables.append(paper_trail.called_table(ctx))
    s.tables.append(pins_table(ctx))  # requested vs served per purpose (model pins)
    s.paragraphs += paper_trail.protocol_lines(ctx)
    s.read += ctx.run_files("calls.jsonl", "protocol/addendum.toml")
    return s


def question(ctx: Context) -> Section:
    s = Section(2, read=ctx.input_file("header"))
    text = ctx.inputs.header.get("question")
    if not text:
        s.not_run = "no --header with a `question` was given"
    else:
        s.paragraphs.append(str(text))
    return s


def arms(ctx: Context) -> Section:
    s = Section(3, read=ctx.run_files("run.json", "turns.jsonl", "calls.jsonl", "egress.jsonl"))
    s.read += ctx.run_files("strays_seen.jsonl") + ctx.input_file("scan")
    void = ctx.inputs.void_arms
    halted = stray_turns(ctx)
    s.paragraphs.append(paper_trail.subject_line(ctx))
    rows = [
        [
            name,
            str(arm.turns),
            str(arm.calls),
            str(arm.stray_connections),
            "not run (no --scan)" if void is None else "VOID" if name in void else "clean",
            str(halted.get(name, 0)),
        ]
        for name, arm in ctx.report.arms.items()
    ]
    columns = ["arm", "turns", "calls", "refused connections", "canary scan",
               "stray_connection turns"]  # fmt: skip
    s.tables.append(Table(columns, rows))
    # What each arm's turns ended in, and whether that fails the run
    # (harness/report/sections/outcomes.py).
    s.tables.append(outcomes_table(ctx))
    guarded = guard_table({name: arm.guard for name, arm in ctx.report.arms.items()})
    if guarded is not None:  # the study's [guard]: its verdicts beside the outcomes, not in them
        s.tables.append(guarded)
    refused = refused_table(ctx)
    if refused.rows:
        s.tables.append(refused)
    unturned = unturned_calls(ctx)
    if unturned is not None:
        s.tables.append(unturned)
        n = sum(c.item is None or c.turn is None for c in ctx.data.calls)
        s.paragraphs.append(
            f"{n} call(s) made while none of their arm's turns ran (late calls of a cut turn, "
            "start-up, teardown) are listed per arm: they count in the arm's cost, in no turn's."
        )
    s.paragraphs.append(
        "Every arm got the same script, deadline and pinned clock, alone on its own network, "
        "reaching nothing but the proxy; a refused connection fails the run."
    )
    return s


def families(ctx: Context) -> Section:
    s = Section(4, read=ctx.run_files("turns.jsonl") + ctx.input_file("judgments"))
    family_of = _family_of(ctx)
    items = sorted({t.item for t in ctx.data.turns})
    dropped = set(ctx.report.dropped_items)
    per_family: dict[str, list[str]] = {}
    for item in items:
        per_family.setdefault(family_of.get(item, "all"), []).append(item)
    turns = Counter((family_of.get(t.item, "all")) for t in ctx.data.turns if t.item not in dropped)
    rows = [
        [
            family,
            str(len(members)),
            str(sum(m in dropped for m in members)),
            str(turns.get(family, 0)),
        ]
        for family, members in sorted(per_family.items())
    ]
    s.tables.append(Table(["family", "items", "dropped (infrastructure)", "turns kept"], rows))
    if dropped:
        names = ", ".join(ctx.anon.item(i) for i in sorted(dropped))
        s.paragraphs.append(
            f"{len(dropped)} item(s) failed for infrastructure reasons after their retries and "
            f"are dropped from every arm: {names}."
        )
    if ctx.inputs.judgments is None and not family_of:
        s.paragraphs.append("Families: not run (no --judgments); every item counts as `all`.")
    elif ctx.inputs.judgments is None:
        s.paragraphs.append(
            "Families: the memory benchmark's question types (LoCoMo: categories), from "
            "questions.jsonl; no --judgments."
        )
    return s


def limitations(ctx: Context) -> Section:
    s = Section(12, read=ctx.input_file("header") + ctx.input_file("scan"))
    given = [str(x) for x in ctx.inputs.header.get("limitations") or []]
    found = list(given)
    for name, arm in ctx.report.arms.items():
        if arm.last_token.p95_censored:
            found.append(
                f"{name}: the last-token p95 is at least the deadline (cut turns rank above)."
            )
    if ctx.report.dropped_items:
        found.append(f"{len(ctx.report.dropped_items)} item(s) dropped from every arm.")
    for voided, why in sorted((ctx.inputs.void_arms or {}).items()):
        found.append(f"{voided} is VOID: a canary was served before its event ({'; '.join(why)}).")
    if ctx.inputs.void_arms is None:
        found.append("No canary scan was given (--scan): leaked answers were not searched for.")
    outside = [c for c in ctx.data.calls if c.item is None or c.turn is None]
    if outside:
        spent = sum((c.cost_usd for c in outside), Decimal(0))
        found.append(
            f"{len(outside)} call(s) outside any turn ({money(spent)}) are in their arm's total "
            "cost but in no per-turn figure."
        )
    sources = Counter(c.tokens.source for c in ctx.data.calls)
    estimated = {k: v for k, v in sources.items() if k not in ("vendor", "none")}
    if estimated:
        found.append(
            f"Token counts not from the vendor's usage: {dict(sorted(estimated.items()))}."
        )
    if ctx.report.mode == "record":
        found.append("A record-mode run: stubs answered every call, so costs are zero.")
    found += paper_trail.deviation_lines(ctx)
    voids = paper_trail.voids_table(ctx)
    if voids is not None:
        s.tables.append(voids)
        found.append(
            f"{len(ctx.data.voided)} item(s) voided after their run (a harness defect; "
            "`harness void`) are set aside in every arm and left out of every statistic; the "
            "table gives each one's reason and, when a later run given to this report reran it, "
            "the difference."
        )
    if not found:
        found.append("None found by the generator, and none given (--header `limitations`).")
    s.paragraphs += found
    s.read += ctx.run_files("voids.jsonl", "protocol/addendum.toml", ADDENDUM_NOW)
    return s


def appendix(ctx: Context) -> Section:
    s = Section(13, read=ctx.input_file("judgments") + ctx.input_file("provenance"))
    s.read += ctx.input_file("prices")
    judgments = ctx.inputs.judgments
    if judgments is None:
        s.paragraphs.append("Rubric hashes: not run (no --judgments).")
    else:
        # Every rubric: per-answer ones (flags, grades) and pairwise ones alike.
        rubrics = Counter((j.metric, j.rubric_sha256 or "-") for j in judgments)
        rubrics.update((p.metric, p.rubric_sha256 or "-") for p in ctx.inputs.pairs or [])
        s.tables.append(
            Table(
                ["metric", "rubric SHA-256", "judgments"],
                [[m, h, str(n)] for (m, h), n in sorted(rubrics.items())],
            )
        )
    if ctx.inputs.provenance is None:
        s.paragraphs.append("Materials provenance: not run (no --provenance).")
    else:
        rows = [_material(ctx, row) for row in ctx.inputs.provenance]
        s.tables.append(Table(["material", "kind", "SHA-256", "source"], rows))
    protocol = paper_trail.protocol_tables(ctx)
    if protocol:
        s.tables += protocol
        s.read += ctx.run_files("run.json", "protocol/addendum.toml", ADDENDUM_NOW)
    s.tables.append(_price_table(ctx))
    every = [ctx.describe(f) for f in ctx.data.read] + [
        ctx.describe(f) for f in ctx.inputs.read.values()
    ]
    s.tables.append(Table(["every file this report read"], [[line] for line in every]))
    return s


def _material(ctx: Context, row: dict[str, Any]) -> list[str]:
    name = str(row["name"])
    if ctx.anon.public:
        name = name.rsplit("/", 1)[-1]
    source = str(row.get("source") or "-")
    return [
        name,
        str(row.get("kind") or "-"),
        str(row["sha256"]),
        "-" if ctx.anon.public else source,
    ]


def _price_table(ctx: Context) -> Table:
    prices = ctx.inputs.prices
    if prices is None:
        return Table(["price table"], [[f"{NOT_RUN} (no --prices)"]])
    used = sorted({c.model_served or c.model_requested or "" for c in ctx.data.calls} - {""})
    rows = []
    for name in used:
        try:
            price = prices.model(name)
        except Exception:  # a model the table does not know: named, never priced at 0
            rows.append([name, "not in the table", "-", "-", "-"])
            continue
        rows.append([name, str(price.input), str(price.output), str(price.cread), str(price.cw5m)])
    columns = ["model", "input $/M", "output $/M", "cache read $/M", "cache write $/M"]
    return Table(columns, rows)


def _family_of(ctx: Context) -> dict[str, str]:
    """The judgments' families; a memory benchmark's question without one is counted by its
    question type (LongMemEval) or category (LoCoMo), from questions.jsonl or the T1 pack."""
    from rundir.turns import read_questions

    by_question = {
        q.item: q.question_type or f"category {q.category}"
        for run_dir in ctx.data.run_dirs
        for q in read_questions(run_dir / "questions.jsonl")
    }
    # The T1 pack's (--pack) families too; a judgment's own family wins unless it is `all`.
    packed = by_question | (ctx.inputs.families or {})
    judged = {j.item: j.family for j in ctx.inputs.judgments or []}
    return packed | {item: f for item, f in judged.items() if f != "all" or item not in packed}
