"""Judge-free scoring for items that carry gold answers (`--gold FILE`): each arm's turn text
scored by normalised exact match, and NET(λ) with abstentions, from harness/stats/scorers.py.

The gold file, JSONL: `{"item", "turn", "gold": "answer" | ["answer", ...], "family"?}`. The turn
text as the arm sent it is the answer (a cut turn's partial text included: it is what the user
got). Each scored answer becomes a judgment like those of `--judgments` (metric `exact match`,
judge `judge-free`), so results and verdicts treat both alike; the NET sweep is kept apart.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from harness.report.reading.inputs import Judgment
from harness.report.reading.rundata import RunData
from harness.stats import Judgement, judge_answer

NetKey = tuple[str, str]  # (family, arm)


def score_gold(
    data: RunData, gold: list[dict[str, Any]]
) -> tuple[list[Judgment], dict[NetKey, list[Judgement]]]:
    wanted = {(str(g["item"]), int(g["turn"])): g for g in gold}
    judgments, net = [], defaultdict(list)
    for t in data.turns:
        row = wanted.get((t.item, t.turn))
        if row is None or t.outcome == "infra_failed":
            continue
        verdict = judge_answer(t.text, row["gold"])
        family = str(row.get("family") or "all")
        net[(family, t.arm)].append(verdict)
        judgments.append(
            Judgment(
                item=t.item,
                arm=t.arm,
                turn=t.turn,
                family=family,
                metric="exact match",
                value=1.0 if verdict == "right" else 0.0,
                binary=True,
                judge="judge-free",
                rubric_sha256=None,
                run=t.run,
                scale="0/1",
                source=f"--gold item {t.item} turn {t.turn}",
                votes=f"gold {row['gold']!r}: {verdict}",
            )
        )
    return judgments, dict(net)
