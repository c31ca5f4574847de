"""The study's script as the run ran it: its items and their turns (the user's messages), read
back from the study file run.json names, and only if that file still has the run's SHA-256 (a
study changed since is not this run's script). The run directory does not copy the items, so a
report of a moved or edited study goes without them and says less, never something else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.study import Item


def study_items(study: dict[str, Any]) -> list[Item] | None:
    path = study.get("study_path")
    if not path:
        return None
    from harness.study import load_study

    try:
        loaded = load_study(Path(str(path)))
    except (HarnessError, OSError, ValueError):
        return None
    if loaded.study_sha256 != study.get("study_sha256"):
        return None
    return loaded.items


def user_messages(study: dict[str, Any]) -> dict[tuple[str, int], str]:
    """(item, turn) -> what the user said on that turn, when the script can be read back."""
    return {
        (item.id, n): turn.user
        for item in study_items(study) or []
        for n, turn in enumerate(item.turns)
    }
