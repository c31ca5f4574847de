"""drilldown.html: the per-item view behind sections 6 and 7, one table per family, one row per
judged turn: each arm's answer, the judges' votes and the outcome, traced to where it was read.

Item ids and answers are private, so a public copy (`--public`) writes no drill-down. The page is
rendered by Jinja2 with autoescape under a Content-Security-Policy that loads nothing and runs
only its own inline script (sort and filter, allowed by its SHA-256), so an answer holding markup
or a script stays text.
"""

from __future__ import annotations

import base64
import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness.report.context import Context
from harness.report.formats.render import HTML_TEMPLATES as _HTML
from harness.report.reading import user_messages
from harness.report.sections import family_of, kept_pairs
from rundir.atomic import write_atomic


@dataclass
class Row:
    item: str
    turn: str
    metric: str
    scale: str
    answers: list[tuple[str, str]]  # (arm, its answer)
    votes: str  # one line per judge and order: its vote, and its reply as received
    outcome: str
    source: str
    user: str = "-"  # what the user said on this turn (the study's script)

    @property
    def anchor(self) -> str:
        return f"{self.item}/{self.turn}"


@dataclass
class Family:
    name: str
    rows: list[Row] = field(default_factory=list)


def drilldown(ctx: Context) -> list[Family]:
    text = {(t.arm, t.item, t.turn): t.text or "" for t in ctx.data.turns}
    said = user_messages(ctx.data.study)
    dropped = set(ctx.report.dropped_items)
    families: dict[str, list[Row]] = defaultdict(list)
    for j in ctx.inputs.judgments or []:
        if j.item in dropped:
            continue
        answer = text.get((j.arm, j.item, j.turn), "-") if j.turn is not None else "-"
        outcome = f"{j.arm}: {j.value:g}" + (f" (axis {j.axis})" if j.axis else "")
        families[family_of(ctx, j.item, j.family)].append(
            Row(
                j.item,
                _turn(j.turn),
                j.metric,
                j.scale,
                [(j.arm, answer)],
                j.votes or "-",
                outcome,
                j.source,
                said.get((j.item, j.turn), "-") if j.turn is not None else "-",
            )
        )
    for p in kept_pairs(ctx):
        answers = [(arm, text.get((arm, p.item, p.turn), "-")) for arm in (p.arm_a, p.arm_b)]
        winner = p.arm_a if p.value > 0.5 else p.arm_b if p.value < 0.5 else "tie"
        outcome = f"{p.arm_a} share {p.value:g}: {winner} (axis {p.axis})"
        families[family_of(ctx, p.item, p.family)].append(
            Row(
                p.item,
                _turn(p.turn),
                p.metric,
                p.scale,
                answers,
                p.votes,
                outcome,
                p.source,
                said.get((p.item, p.turn), "-"),
            )
        )
    return [
        Family(name, sorted(rows, key=lambda r: (r.item, r.turn, r.metric, r.outcome)))
        for name, rows in sorted(families.items())
    ]


# Sort by a column (click its header) and filter rows by any text (the box, or the page's
# address after `#q=`, which the report's links use): no request, no library. The page's
# Content-Security-Policy lets this one script run by its SHA-256 and nothing else
# (https://www.w3.org/TR/CSP3/#grammardef-hash-source).
SCRIPT = """
const box = document.getElementById("filter");
function apply() {
  const q = box.value.toLowerCase();
  for (const row of document.querySelectorAll("tbody tr")) {
    row.hidden = q !== "" && !row.textContent.toLowerCase().includes(q);
  }
}
box.addEventListener("input", apply);
if (location.hash.startsWith("#q=")) {
  box.value = decodeURIComponent(location.hash.slice(3));
  apply();
}
for (const th of document.querySelectorAll("th")) {
  th.addEventListener("click", () => {
    const body = th.closest("table").tBodies[0];
    const at = th.cellIndex;
    const down = th.dataset.down !== "1";
    th.dataset.down = down ? "1" : "0";
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = a.cells[at].textContent, y = b.cells[at].textContent;
      const n = Number(x) - Number(y);
      const c = Number.isNaN(n) ? x.localeCompare(y) : n;
      return down ? c : -c;
    });
    for (const row of rows) body.appendChild(row);
  });
}
"""


def script_hash() -> str:
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _turn(turn: int | None) -> str:
    return "-" if turn is None else str(turn)


def write_drilldown(ctx: Context, path: Path, title: str) -> Path | None:
    if ctx.anon.public or ctx.inputs.judgments is None:
        return None
    page = _HTML.get_template("drilldown.html.j2").render(
        title=title, families=drilldown(ctx), script=SCRIPT, script_hash=script_hash()
    )
    write_atomic(path, page)
    return path
