"""BENCHMARKS.md is shared by every bench: each rewrites only its own `## ` section."""

from __future__ import annotations

import re
from pathlib import Path

FILE_HEADER = (
    "# Benchmarks\n\nFigures written by the scripts in `bench/`; `bench/run` runs them all.\n"
)


def replace_section(path: Path, title: str, section: str) -> None:
    """Replace the section headed `## {title}` of `path`, or append it; other sections stay."""
    text = path.read_text() if path.exists() else FILE_HEADER
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)
