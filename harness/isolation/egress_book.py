"""egress.jsonl as a book: every refused attempt read once from its source as the run goes on,
appended, never rewritten, with repeated attempts counted rather than dropped.

Each source is a file some writer appends to (an arm's guard log, the proxy's and the DNS
refuser's logs, the kernel-log follower's output); the book keeps how far it has read each one
and takes only new, complete lines, so an attempt is counted exactly once however often the run
looks, and two refused lookups of one name in the same millisecond are two attempts.

Folding (`fold`): of the entries read in one look, those with the same arm, destination, source
and protocol become one line with `count` (the first and `last_time` the last of them); the
first attempt ever seen of a destination is always a line of its own, so a burst that follows
it can never hide it. The sum of `count` (1 when absent) is the number of attempts.

An arm can rewrite its own guard log (it is in its folder): a log that shrank or was replaced is
read again from its start and what is read then is flagged `rewritten`; what was read before
stays in the book.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from rundir.instances import split
from rundir.network import EgressEntry

Entry = dict[str, object]
FIELD_MAX = 300  # an arm's text kept in a field: enough to read, not enough to flood a report
READ_MAX = 16 * 1024 * 1024  # of one source per look: a flooding arm cannot stall the run
_FOLD_KEY = ("arm", "worker", "destination", "source", "protocol", "claimed_arm", "claimed_source")


class Tail:
    """New complete lines of one file, from where the last look stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.inode: tuple[int, int] | None = None
        self.rewritten = False
        self.lines_read = 0  # complete lines taken so far (a guard entry's `line` continues it)

    def lines(self) -> list[str]:
        """Never through a symlink an arm planted, only a regular file, at most READ_MAX."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return []
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return []
            inode = (info.st_dev, info.st_ino)
            if (self.inode is not None and inode != self.inode) or info.st_size < self.offset:
                self.offset, self.lines_read, self.rewritten = 0, 0, True  # its writer redid it
            self.inode = inode
            f.seek(self.offset)
            data = f.read(READ_MAX)
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next look
        if not end and len(data) == READ_MAX:  # no line end in READ_MAX: taken as one line, or
            end = len(data)  # an arm that never ends a line would hide every later one
        self.offset += end
        lines = data[:end].decode("utf-8", errors="replace").splitlines()
        self.lines_read += len(lines)
        return lines


class EgressBook:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.touch()
        self.tails: dict[Path, Tail] = {}
        self.entries: list[Entry] = []  # everything appended so far
        self.firsts: set[tuple[str, ...]] = set()

    def tail(self, path: Path) -> Tail:
        return self.tails.setdefault(path, Tail(path))

    def moved(self, path: Path) -> None:
        """`path` was replaced by the harness with a copy of itself (an arm's disk copied out):
        reading goes on from where it stopped, not from the start as for a rewrite."""
        tail = self.tails.get(path)
        if tail is not None:
            tail.inode = None

    def add(self, entries: Iterable[Entry]) -> list[Entry]:
        """Fold `entries` (new ones, read once), append them to egress.jsonl, return them."""
        checked = [_checked(e) for e in sorted(entries, key=lambda e: str(e.get("time")))]
        folded = self.fold(checked)
        if folded:
            text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in folded)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            self.entries += folded
        return folded

    def fold(self, entries: list[Entry]) -> list[Entry]:
        groups: dict[tuple[str, ...], list[Entry]] = {}
        out: list[Entry] = []
        for entry in entries:
            key = tuple(str(entry.get(k)) for k in _FOLD_KEY)
            if key not in self.firsts:
                self.firsts.add(key)
                out.append(entry)  # the first attempt at a destination: a line of its own
                continue
            groups.setdefault(key, []).append(entry)
        for same in groups.values():
            first = dict(same[0])
            if len(same) > 1:
                first["count"] = sum(int(str(e.get("count", 1))) for e in same)
                first["last_time"] = same[-1].get("time")
            out.append(first)
        return sorted(out, key=lambda e: str(e.get("time")))


def attempts(entry: Entry) -> int:
    """How many refused attempts an entry of egress.jsonl stands for."""
    count = entry.get("count", 1)
    return count if isinstance(count, int) and count > 0 else 1


def _checked(entry: Entry) -> Entry:
    """The entry as egress.jsonl has it: a worker's copy `A@k` (the name its folder, listener
    or network carries) written as arm `A` and worker k, so the file names the study's arms."""
    checked = as_entry(entry).as_dict()
    arm, worker = split(str(checked["arm"]))
    if worker is not None:
        checked["arm"], checked["worker"] = arm, worker
    return checked


def as_entry(entry: dict[str, object]) -> EgressEntry:
    """An entry as egress.jsonl's model has it; one that does not fit is kept, flagged
    `unreadable`: a refusal is evidence against the run, never dropped for its form."""
    try:
        return EgressEntry.model_validate(entry)
    except ValidationError:
        arm, source = entry.get("arm"), entry.get("source")
        return EgressEntry(
            arm=arm if isinstance(arm, str) else "?",
            destination="?",
            time="?",
            source=source if source in ("guard", "proxy", "dns", "kernel") else "proxy",
            flags=["unreadable"],
            raw=json.dumps(entry, default=str)[:FIELD_MAX],
        )
