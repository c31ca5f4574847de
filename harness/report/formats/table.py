"""The terminal table `harness report` prints: one line per arm."""

from __future__ import annotations

from harness.report.figures import RunReport


def render_table(report: RunReport) -> str:
    head = (
        f"{'arm':<16} {'turns':>5} {'done':>5} {'cut':>4} {'error':>5} {'limit':>5} {'infra':>5} "
        f"{'first p50':>9} {'last p50':>8} {'last p95':>8} {'calls':>5} {'cost USD':>12} "
        f"{'stray':>5}"
    )
    lines = [f"run {report.run_id} ({report.mode})", head]
    for name, arm in report.arms.items():
        out = arm.outcomes
        lines.append(
            f"{name:<16} {arm.turns:>5} {out.get('done', 0):>5} {out.get('cut', 0):>4} "
            f"{out.get('error', 0):>5} {out.get('resource_limit', 0):>5} {arm.turns_dropped:>5} "
            f"{_seconds(arm.first_token.p50_s, arm.first_token.p50_censored):>9} "
            f"{_seconds(arm.last_token.p50_s, arm.last_token.p50_censored):>8} "
            f"{_seconds(arm.last_token.p95_s, arm.last_token.p95_censored):>8} "
            f"{arm.calls:>5} {arm.cost_usd:>12} {arm.stray_connections:>5}"
        )
    if report.dropped_items:
        lines.append(
            f"dropped from every arm (infrastructure): {len(report.dropped_items)} item(s)"
        )
    lines.append(f"total cost USD {report.total_cost_usd}")
    return "\n".join(lines)


def _seconds(value: float | None, censored: bool) -> str:
    if value is None:
        return "-"
    return f">={value:.1f}s" if censored else f"{value:.2f}s"


def text_table(columns: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell, for a terminal."""
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)
