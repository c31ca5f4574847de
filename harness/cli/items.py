"""`harness items STUDY`: the items a study draws, and how many of each stratum."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.options import STUDY_FILE


def items(
    study: Path = STUDY_FILE,
) -> int:
    """Print the items a study runs (a memory benchmark's drawn questions) and the counts per
    stratum; reads the files only, starts nothing."""
    from harness.study import load_study

    loaded = load_study(study)
    source = loaded.file.items
    for item in loaded.items:
        memory = item.memory
        if memory is None:
            typer.echo(f"{item.id}  {item.clock:%Y-%m-%d %H:%M}  {len(item.turns)} turns")
            continue
        q = memory.question
        kind = q.question_type or f"category {q.category}"
        flags = " abstention" if q.abstention else ""
        typer.echo(
            f"{item.id}  {kind}{flags}  asked {q.question_date:%Y-%m-%d %H:%M}  "
            f"history {memory.history.id} ({len(memory.history.sessions)} sessions)  "
            f"{_short(q.question)}"
        )
    drawn = loaded.drawn
    if drawn is None:
        typer.echo(f"{len(loaded.items)} items")
        return 0
    histories = {item.memory.history.id for item in loaded.items if item.memory}
    by = getattr(source, "stratify", None) or "none"
    typer.echo(
        f"{len(loaded.items)} of {sum(drawn.available.values())} questions drawn "
        f"({len(histories)} histories), stratified by {by}:"
    )
    for name in sorted(drawn.available):
        typer.echo(f"  {name}: {drawn.drawn[name]} of {drawn.available[name]}")
    abstaining = sum(1 for item in loaded.items if item.memory and item.memory.question.abstention)
    typer.echo(f"  abstention questions: {abstaining}")
    return 0


def _short(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
