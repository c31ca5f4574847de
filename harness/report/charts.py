"""The HTML report's inline SVG charts, drawn by pygal.

pygal over matplotlib: it writes SVG natively (no rasteriser, no font cache, no GUI backend), is
pure Python with one small dependency, and its interactive JavaScript can be switched off
entirely (`js=[]`, https://www.pygal.org/en/stable/documentation/configuration/rendering.html),
which the page's Content-Security-Policy (no scripts, nothing loaded) requires anyway. Its
stylesheet is written inline into the SVG. `disable_xml_declaration` lets the SVG sit inside
HTML. Charts never carry item ids, so a public copy's charts are the private copy's charts.
"""

from __future__ import annotations

from decimal import Decimal

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


def latency_chart(per_arm: dict[str, list[float]], cut: dict[str, int], deadline_s: float) -> str:
    """Each arm's last-token latencies, one box per arm; cut turns drawn at the deadline."""
    chart = pygal.Box(title="Last-token latency per arm (s); cut turns at the deadline", **_CONFIG)
    for arm, values in per_arm.items():
        chart.add(arm, sorted(values) + [deadline_s] * cut.get(arm, 0) or [0])
    return str(chart.render(is_unicode=True))


def cost_chart(per_arm: dict[str, list[float]]) -> str:
    """Dollars per turn, one box per arm."""
    chart = pygal.Box(title="Cost per turn per arm (USD)", **_CONFIG)
    for arm, values in per_arm.items():
        chart.add(arm, values or [0])
    return str(chart.render(is_unicode=True))


def ledger_chart(stages: dict[str, tuple[Decimal, Decimal, Decimal]]) -> str:
    """Per stage: settled spend and open reservations stacked, beside the cap."""
    chart = pygal.Bar(title="Stage spend against its cap (USD)", **_CONFIG)
    chart.x_labels = list(stages)
    chart.add("spend (with factors)", [float(s[0]) for s in stages.values()])
    chart.add("open reservations", [float(s[1]) for s in stages.values()])
    chart.add("cap", [float(s[2]) for s in stages.values()])
    return str(chart.render(is_unicode=True))
