"""The HTML report's inline SVG charts, drawn by pygal.

pygal over matplotlib: it writes SVG natively (no rasteriser, no font cache, no GUI backend), is
pure Python with one small dependency, and its interactive JavaScript can be switched off
entirely (`js=[]`, https://www.pygal.org/en/stable/documentation/configuration/rendering.html),
which the page's Content-Security-Policy (no scripts, nothing loaded) requires anyway. Its
stylesheet is written inline into the SVG. `disable_xml_declaration` lets the SVG sit inside
HTML. Even with no JavaScript pygal writes an inline `<script>` holding its chart config; an
XML filter (pygal's own hook, `add_xml_filter`) removes every script element before the SVG is
serialised, so the page holds no script at all, not just none the policy lets run. Each chart
gets a fixed id instead of pygal's random UUID, so the same run gives the same page.
Charts never carry item ids, so a public copy's charts are the private copy's charts.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pygal
from pygal.style import CleanStyle

_CONFIG = dict(
    js=[],
    disable_xml_declaration=True,
    style=CleanStyle,
    width=720,
    height=320,
    explicit_size=True,
    legend_at_bottom=True,
)


def _without_scripts(root: Any) -> Any:
    for parent in root.iter():
        for child in list(parent):
            if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def _render(chart: Any, name: str) -> str:
    chart.uuid = name  # pygal's element ids and CSS scope: fixed, so the output is reproducible
    chart.add_xml_filter(_without_scripts)
    return str(chart.render(is_unicode=True))


def latency_chart(per_arm: dict[str, list[float]], cut: dict[str, int], deadline_s: float) -> str:
    """Each arm's last-token latencies, one box per arm; cut turns drawn at the deadline."""
    chart = pygal.Box(title="Last-token latency per arm (s); cut turns at the deadline", **_CONFIG)
    for arm, values in per_arm.items():
        chart.add(arm, sorted(values) + [deadline_s] * cut.get(arm, 0) or [0])
    return _render(chart, "latency")


def cost_chart(per_arm: dict[str, list[float]]) -> str:
    """Dollars per turn, one box per arm."""
    chart = pygal.Box(title="Cost per turn per arm (USD)", **_CONFIG)
    for arm, values in per_arm.items():
        chart.add(arm, values or [0])
    return _render(chart, "cost")


def ledger_chart(stages: dict[str, tuple[Decimal, Decimal, Decimal]]) -> str:
    """Per stage: settled spend and open reservations stacked, beside the cap."""
    chart = pygal.Bar(title="Stage spend against its cap (USD)", **_CONFIG)
    chart.x_labels = list(stages)
    chart.add("spend (with factors)", [float(s[0]) for s in stages.values()])
    chart.add("open reservations", [float(s[1]) for s in stages.values()])
    chart.add("cap", [float(s[2]) for s in stages.values()])
    return _render(chart, "ledger")


def forest_plot(
    title: str,
    rows: list[tuple[str, float, float, float, float | None]],
    name: str,
    zero_line: bool = True,
) -> str:
    """A forest plot: one row per (label, estimate, low, high, margin), the estimate as a dot on
    its interval, a solid line at 0 (no difference) and a dashed mark at minus each row's
    non-inferiority margin. The x range is set from every interval, 0 and the margins, with a
    little room, so no interval leaves the frame; one axis, one scale (+ = candidate better).
    pygal has no forest plot of its own; its XY chart draws one from line segments."""
    n = len(rows)
    ends = [0.0] * zero_line + [v for r in rows for v in (r[2], r[3], r[1])]
    ends += [-r[4] for r in rows if r[4]]
    low, high = min(ends), max(ends)
    pad = (high - low) * 0.08 or 0.05
    # One colour per role, not per series: pygal colours series in order of adding.
    colors = ["#1d232b"] * zero_line
    for r in rows:
        colors += ["#2b5c8a", "#2b5c8a"] + (["#b3261e"] if r[4] else [])
    style = CleanStyle(colors=tuple(colors))
    chart = pygal.XY(
        title=title,
        **{**_CONFIG, "style": style, "height": max(180, 90 + 40 * n)},
        show_legend=False,
        xrange=(low - pad, high + pad),
        range=(-0.8, n - 0.2),
        y_labels=[{"label": r[0], "value": n - 1 - i} for i, r in enumerate(rows)],
        show_y_guides=False,
        dots_size=5,
        stroke_style={"width": 2},
        truncate_label=-1,
        y_labels_major_every=1,
    )
    if zero_line:
        chart.add("0", [(0.0, -0.8), (0.0, n - 0.2)], show_dots=False, stroke_style={"width": 1.5})
    for i, (label, estimate, lo, hi, margin) in enumerate(rows):
        y = n - 1 - i
        chart.add(label, [(lo, y), (hi, y)], show_dots=False)
        chart.add(label, [(estimate, y)], stroke=False, dots_size=6)
        if margin:
            chart.add(
                f"margin {label}",
                [(-margin, y - 0.35), (-margin, y + 0.35)],
                show_dots=False,
                stroke_style={"width": 1.5, "dasharray": "4, 3"},
            )
    return _render(chart, name)


def interval_plots(title: str, bars: list[tuple[str, str, float, float, float]], name: str) -> str:
    """Means with their intervals, one dot-and-interval plot per group (a metric on its own
    scale, never two scales on one axis): `bars` holds (group, series, estimate, low, high)."""
    groups = sorted({b[0] for b in bars})
    return "\n".join(
        forest_plot(
            f"{title}: {group}",
            [(b[1], b[2], b[3], b[4], None) for b in bars if b[0] == group],
            f"{name}-{k}",
            zero_line=False,
        )
        for k, group in enumerate(groups)
    )
