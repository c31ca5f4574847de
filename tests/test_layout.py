"""The rooms' import arrows run one way (docs/architecture.md, "Rooms and the arrows between
them"): a format or a vendor fact that imported the proxy or the orchestrator would drag them into
every reader of a run, and a proxy that imported the orchestrator could no longer run on its own
(`python -m proxy`).

Read from the source with `ast`, so an import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("harness", "proxy", "stubs", "ledger", "rundir", "vendors", "canonical", "arms")
# room -> the rooms of ours it may import (itself always allowed).
ALLOWED: dict[str, set[str]] = {
    "canonical": set(),
    "vendors": set(),
    "rundir": {"canonical"},
    "ledger": {"canonical"},
    "stubs": {"vendors"},
    "proxy": {"stubs", "ledger", "rundir", "vendors", "canonical"},
}


def imported_rooms(path: Path) -> set[str]:
    rooms: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        rooms |= {name.split(".")[0] for name in names if name.split(".")[0] in OURS}
    return rooms


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_room_imports_only_what_is_below_it(room: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_rooms(path) - ALLOWED[room] - {room})
        for path in sorted((ROOT / room).rglob("*.py"))
    }
    assert {file: rooms for file, rooms in wrong.items() if rooms} == {}


def test_isolation_does_not_import_the_cli() -> None:
    """The backends are used by the CLI, never the other way round."""
    offenders = []
    for path in sorted((ROOT / "harness" / "isolation").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module and module.startswith("harness.cli"):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
