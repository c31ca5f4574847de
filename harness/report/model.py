"""What a report section is, independent of its format: the markdown and HTML templates render
the same `Section` objects, so the two formats cannot drift apart in content."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

NOT_RUN = "not run"

TITLES = (
    "Run identity",
    "The question",
    "The arms",
    "Task families and item counts",
    "Metrics, judges and pins",
    "Results per family",
    "Pairwise verdicts",
    "Cost per arm, tokens, cached tokens and the counterfactual",
    "Latency per arm",
    "The determinism gate and the stability check",
    "The spend ledger",
    "Limitations",
    "Appendix: rubric hashes, materials provenance and the price table",
)
# The confirmatory analysis's own section (only with --analysis), numbered after the thirteen
# every report has and placed after the spend ledger (the design's Appendix A).
VERDICTS_NUMBER = len(TITLES) + 1
VERDICTS_TITLE = "Verdicts"


@dataclass
class Table:
    columns: list[str]
    rows: list[list[str]]
    # Per row, where its first cell links in the HTML (the drill-down's rows for it), or None.
    links: list[str | None] | None = None


@dataclass
class Section:
    number: int
    read: list[str] = field(default_factory=list)  # "kind: path, SHA-256 ..." per file read
    not_run: str | None = None  # why the section is "not run" (an input was not given)
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    chart: str | None = None  # an inline SVG (HTML only)

    @property
    def title(self) -> str:
        return VERDICTS_TITLE if self.number == VERDICTS_NUMBER else TITLES[self.number - 1]


def money(value: Decimal) -> str:
    # Exact, without the trailing zeros Decimal arithmetic leaves (0.000340 and 0.00034 are one
    # figure), and never in exponent notation.
    return f"${value.normalize():f}"


def seconds(value: float | None, censored: bool = False) -> str:
    if value is None:
        return "-"
    return f"≥ {value:.2f} s (cut)" if censored else f"{value:.2f} s"


def plain(value: object) -> str:
    """A setting as a reader writes it, not as Python prints it: `a = 1, b = x, y` for a
    mapping, `x, y` for a list, `none` for an empty one (no braces, quotes or brackets)."""
    if isinstance(value, dict):
        if not value:
            return "none"
        return ", ".join(f"{k} = {plain(v)}" for k, v in value.items())
    if isinstance(value, list | tuple | set):
        return ", ".join(plain(v) for v in value) if value else "none"
    if value is None:
        return "-"
    return str(value)
