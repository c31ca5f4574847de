"""Section 5 (metrics, judges and pins) and the stability check of section 10, from the judgments
the report was given: each metric with its declared scale, each judge with its pins (engine,
model, effort), each rubric with its version and SHA-256, each axis with its calibration status,
and the set's stability repeats and A/A control."""

from __future__ import annotations

from collections import Counter

from harness.report.context import Context
from harness.report.model import NOT_RUN, Section, Table, plain

# The set's bar names as the report shows them ("running" is also an ordinary item name, which a
# public copy must never print).
_BARS = {"running detection": "detection of the mixed-in controls"}


def metrics(ctx: Context) -> Section:
    s = Section(5, read=ctx.run_files("run.json") + ctx.input_file("header"))
    s.read += ctx.input_file("judgments")
    pins = ctx.data.study.get("pins") or {}
    s.paragraphs.append(f"Pinned sampling: {plain(pins)}.")
    declared = ctx.inputs.header.get("metrics")
    judged = sorted(
        {f"{j.metric} ({j.scale})" for j in ctx.inputs.judgments or []}
        | {f"{p.metric} (win_share)" for p in ctx.inputs.pairs or []}
    )
    if declared:
        s.paragraphs.append(f"Metrics: {', '.join(map(str, declared))}.")
    elif judged:
        s.paragraphs.append(
            f"Metrics: {', '.join(judged)}, as judged (the --header declares none)."
        )
    else:
        s.paragraphs.append(f"Metrics: {NOT_RUN}.")
    if ctx.inputs.judgments is None:
        s.paragraphs.append("Judges: not run (no --judgments).")
        return s
    counts = Counter((j.judge or "judge-free", j.metric, j.scale) for j in ctx.inputs.judgments)
    manifest = ctx.inputs.judgment_set
    judges = "+".join(sorted(p.name for p in manifest.judges)) if manifest else "-"
    counts.update((judges, p.metric, p.scale) for p in ctx.inputs.pairs or [])
    rows = [[judge, metric, scale, str(n)] for (judge, metric, scale), n in sorted(counts.items())]
    s.tables.append(Table(["judge", "metric", "scale", "judgments"], rows))
    if manifest is None:
        s.paragraphs.append(
            "Judge pins and calibration: not run (the judgments are a JSONL file, not a "
            "judgment set from `harness judge`)."
        )
        return s
    s.paragraphs.append(
        f"Judgment set (stage {manifest.stage}, written {manifest.written} by harness "
        f"{manifest.tool_version}); seal SHA-256 {manifest.seal_sha256}, tasks SHA-256 "
        f"{manifest.tasks_sha256}, votes SHA-256 {manifest.votes_sha256}; every vote was traced "
        "to its prompt file and its kept reply before this report read it."
    )
    s.tables.append(
        Table(
            ["judge", "engine", "model", "effort", "client"],
            [[p.name, p.engine, p.model, p.effort, p.client] for p in manifest.judges],
        )
    )
    s.tables.append(
        Table(
            ["rubric", "version", "kind", "SHA-256"],
            [[r.name, r.version, r.kind, r.sha256] for r in manifest.rubrics],
        )
    )
    s.tables.append(
        Table(
            ["axis", "status", "why"],
            [[a.rubric, a.status, "; ".join(a.reasons) or "-"] for a in manifest.axes],
        )
    )
    bars = [
        [b.rubric, b.judge, _BARS.get(b.bar, b.bar), "-" if b.value is None else f"{b.value:.2f}",
         f"{b.op} {b.threshold:g}", f"{b.answered}/{b.held}", b.status]
        for b in manifest.calibration + manifest.running
    ]  # fmt: skip
    s.tables.append(
        Table(["rubric", "judge", "calibration bar", "value", "bar", "answered", "status"], bars)
    )
    if manifest.halts:
        s.paragraphs.append("Halts: " + "; ".join(manifest.halts) + ".")
    return s


def stability(ctx: Context) -> tuple[list[str], list[Table]]:
    """The stability check's paragraphs and tables for section 10 ("not run" without a set)."""
    manifest = ctx.inputs.judgment_set
    if manifest is None:
        return ["The stability check: not run (no judgment set, --judgments SET, was given)."], []
    if not manifest.stability and not manifest.aa:
        return ["The stability check: not run (the judgment set holds no repeats)."], []
    rows = [
        [b.rubric, b.judge, "-" if b.value is None else f"{b.value:.2f}",
         f"{b.op} {b.threshold:g}", f"{b.answered}/{b.held}", b.status]
        for b in manifest.stability
    ]  # fmt: skip
    aa = [
        [a.rubric, str(a.pairs), str(a.needed),
         "-" if a.win_rate is None else f"{a.win_rate:.3f}",
         "-" if a.low is None or a.high is None else f"[{a.low:.3f}, {a.high:.3f}]", a.status]
        for a in manifest.aa
    ]  # fmt: skip
    text = [
        "The stability check: a seeded share of the judgments and every control judged twice "
        "(the same verdict both times), and the A/A control (an arm against a second sample of "
        "itself: passes when the 95% interval of its win rate contains 0.50)."
    ]
    tables = [Table(["rubric", "judge", "same verdict", "bar", "answered", "status"], rows)]
    tables.append(
        Table(["A/A rubric", "pairs", "needed", "win rate", "95% interval", "status"], aa)
        if aa
        else Table(["A/A control"], [["not run (no --aa-run when judging)"]])
    )
    return text, tables
