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


def interval_chart(title: str, bars: list[tuple[str, str, float, float, float]], name: str) -> str:
    """One bar per (group, series) with its interval drawn as a whisker (pygal's manual `ci`):
    `bars` holds (group, series, estimate, low, high)."""
    groups = sorted({b[0] for b in bars})
    series = sorted({b[1] for b in bars})
    chart = pygal.Bar(title=title, **_CONFIG)
    chart.x_labels = groups
    found = {(b[0], b[1]): b for b in bars}
    for label in series:
        values: list[Any] = []
        for group in groups:
            bar = found.get((group, label))
            values.append(
                None if bar is None else {"value": bar[2], "ci": {"low": bar[3], "high": bar[4]}}
            )
        chart.add(label, values)
    return _render(chart, name)
