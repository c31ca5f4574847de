"""Public mode: the same report with nothing private in it, and the scan that proves it.

A public copy names items (and judged cards) by ordinal, runs by ordinal and input files by
their kind and base name. What counts as private is collected from the run itself: its item ids,
run ids, the arms' internal names (the command or image behind an arm's public name), every
path the report read, the machine's host name and the vendor hosts, plus a study-given deny
list. `check_public` fails a folder naming any of them, or any absolute path at all, so a leak
in a future section fails closed instead of being published.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from rundir.jsonlines import read_lines

# An absolute POSIX path with at least two parts, not the tail of a URL ("https://h/a/b").
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.-]+/)+[\w.-]+")
_SCANNED = (".md", ".html", ".jsonl", ".json", ".txt")


@dataclass
class Anonymizer:
    public: bool
    items: dict[str, str] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)

    def item(self, item_id: str) -> str:
        if not self.public:
            return item_id
        return self.items.setdefault(item_id, f"item {len(self.items) + 1}")

    def run(self, run_id: str) -> str:
        if not self.public:
            return run_id
        return self.runs.setdefault(run_id, f"run {len(self.runs) + 1}")

    def path(self, kind: str, path: Path) -> str:
        return f"{kind}: {path.name}" if self.public else str(path)


@dataclass
class Private:
    """Everything a public copy must not contain."""

    words: set[str] = field(default_factory=set)  # matched as whole tokens

    def add(self, *values: str | None) -> None:
        for value in values:
            if value and len(value.strip()) >= 3:
                self.words.add(value.strip())


@dataclass
class Finding:
    file: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: names {self.what}"


def host_names(urls: list[str]) -> list[str]:
    hosts = [socket.gethostname(), socket.getfqdn()]
    return hosts + [urlsplit(u).hostname or "" for u in urls]


def check_public(folder: Path, private: Private) -> list[Finding]:
    """Every private word or absolute path found in the folder's text files."""
    patterns = [
        (re.compile(rf"(?<![\w.-]){re.escape(w)}(?![\w-])"), w) for w in sorted(private.words)
    ]
    findings = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in _SCANNED:
            continue
        for lineno, line in enumerate(read_lines(path), 1):
            for pattern, word in patterns:
                if pattern.search(line):
                    findings.append(Finding(path.name, lineno, repr(word)))
            match = _ABSOLUTE_PATH.search(line)
            if match:
                findings.append(Finding(path.name, lineno, f"the path {match.group(0)!r}"))
    return findings
