"""`--pack FILE.jsonl`: the T1 pack, the recall task's drawn items, as the report's clusters.

LoCoMo's questions share their conversation's history, so their answers are not independent:
the bootstrap must resample whole histories, not single questions. Each line is a study item as
the pack ships it (`{"id", "memory": {"history": {"id"}, "question": {"question_type"?,
"category"?}}}`, harness/datasets/model.py) or a plain `{"item", "cluster", "family"?}`. The
item's cluster is its history; its family is its question type (LongMemEval) or category (LoCoMo).
"""

from __future__ import annotations

import json
from pathlib import Path

from rundir.jsonlines import read_lines


def load_pack(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    clusters: dict[str, str] = {}
    families: dict[str, str] = {}
    for lineno, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        item = row.get("id", row.get("item")) if isinstance(row, dict) else None
        if item is None:
            raise ValueError(f"line {lineno}: every pack item needs `id` (or `item`)")
        memory = row.get("memory") or {}
        question = memory.get("question") or {}
        cluster = row.get("cluster") or (memory.get("history") or {}).get("id")
        if not cluster:
            raise ValueError(f"line {lineno}: item {item!r} has no history id (or `cluster`)")
        if str(item) in clusters:
            raise ValueError(f"line {lineno}: item {item!r} is in the pack twice")
        clusters[str(item)] = str(cluster)
        family = row.get("family") or question.get("question_type")
        if family is None and question.get("category") is not None:
            family = f"category {question['category']}"
        if family:
            families[str(item)] = str(family)
    if not clusters:
        raise ValueError("the pack holds no item")
    return clusters, families
