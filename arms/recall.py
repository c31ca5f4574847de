"""The recalled memories in a memory arm's answer prompt, laid out so they can be counted in the
captured request: the audit checks a study's `[parity] top_k` there (harness/checks/
audit/parity.py), in what the model was sent, not in what an arm says of itself.

    What you remember about this user from earlier in the conversation (top_k=5):
    [memory 1]
    I moved to Lisbon in October.
    [memory 2]
    ...

The heading names the top-k the arm recalled under; each memory starts on a line of its own with
its number, from 1. A memory's own text cannot add a memory to the count: a line of it that looks
like a marker is indented by one space, and a heading's `(top_k=` is written `(top_k =`. Nothing
recalled, no section (the prompt is as it was: a first turn has nothing to recall).
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"^\[memory (\d+)\]$", re.MULTILINE)
_HEADING = re.compile(r"\(top_k=(\d+)\):$", re.MULTILINE)
_LOOKS_LIKE_MARKER = re.compile(r"^(\[memory \d+\])", re.MULTILINE)


def _escaped(memory: str) -> str:
    return _LOOKS_LIKE_MARKER.sub(r" \1", memory).replace("(top_k=", "(top_k =")


def recall_section(title: str, memories: list[str], top_k: int) -> str:
    """The section of the system text that shows `memories`, recalled under `top_k`."""
    if not memories:
        return ""
    shown = "\n".join(f"[memory {n}]\n{_escaped(m)}" for n, m in enumerate(memories, 1))
    return f"{title} (top_k={top_k}):\n{shown}"


def counted(system: str) -> tuple[int, int] | None:
    """(the top-k a system text's section names, the memories it shows) or None when it has no
    section; ValueError when it has two headings or its markers do not run 1, 2, ... n."""
    headings = _HEADING.findall(system)
    if not headings:
        return None
    if len(headings) > 1:
        raise ValueError(f"{len(headings)} recalled-memory sections")
    numbers = [int(n) for n in _MARKER.findall(system)]
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError(f"memory markers out of order: {numbers}")
    return int(headings[0]), len(numbers)
