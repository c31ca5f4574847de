"""The elements file of a cross-arm gate pair (`[[gate.pairs]] differ_by = "elements.txt"`):
where the follower arm fires, and the element's text.

One firing a line: the item's id, the turn (0-based) and the element's text, separated by
white space; the text is the rest of the line, or a JSON string when it starts with `"` (for
leading spaces, newlines, quotes). Blank lines and lines starting with `#` are skipped:

    # item      turn  element
    lisbon      0     "\n\nThe user sounds frustrated: acknowledge it first."

A firing is a turn the file names: the follower decided, in that turn, to add the element, so its
main request of the next turn (turn + 1) must be its leader's with the element's text added, and
nothing else changed (harness/checks/pair_gate.py). A firing on an item's last turn has no next
turn to check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rundir.jsonlines import read_lines


class ElementsError(ValueError):
    """The elements file does not parse; the message names the line."""


@dataclass(frozen=True)
class Firing:
    item: str
    turn: int  # the firing's turn: the element shows in turn + 1
    element: str


def read_elements(path: Path) -> list[Firing]:
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as e:
        raise ElementsError(f"{path}: cannot read it: {e}") from None
    firings: list[Firing] = []
    seen: set[tuple[str, int]] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        firing = _firing(line, f"{path}:{number}")
        if (firing.item, firing.turn) in seen:
            raise ElementsError(f"{path}:{number}: item {firing.item} turn {firing.turn} again")
        seen.add((firing.item, firing.turn))
        firings.append(firing)
    return firings


def _firing(line: str, where: str) -> Firing:
    parts = line.split(maxsplit=2)
    if len(parts) < 3:
        raise ElementsError(f"{where}: give ITEM TURN ELEMENT-TEXT")
    item, turn, text = parts
    if not turn.isdigit():
        raise ElementsError(f"{where}: turn {turn!r} is not a turn number (0, 1, ...)")
    if text.startswith('"'):
        try:
            text = json.loads(text)
        except ValueError as e:
            raise ElementsError(f"{where}: the element is not one JSON string: {e}") from None
        if not isinstance(text, str):
            raise ElementsError(f"{where}: the element is not one JSON string")
    if not text:
        raise ElementsError(f"{where}: the element's text is empty")
    return Firing(item=item, turn=int(turn), element=text)
