"""One JSON-lines framing for the seam and every run file: a line ends at "\\n" and nowhere else.

`str.splitlines()` also ends a line at U+2028, U+2029, U+0085, \\x0b, \\x0c and \\x1c-\\x1e, all of
which a JSON string may hold raw (JSON escapes only the C0 controls below \\x20 it must, and our
writers keep non-ASCII text as it is). A reply holding U+2028 read back with `splitlines()` comes
back as two halves, neither of them JSON. Every reader and appender of a JSON-lines file, and the
orchestrator's side of the seam, frames lines so (the seam's stream splitter is
arms/seam.py's `LineSplitter`, since an arm imports nothing of the harness).

A writer never puts a raw "\\n" inside a line: JSON escapes it in strings, and `append_line`
refuses one (the file would read back as other lines than were written).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from pydantic import BaseModel

NEWLINE = "\n"


def split_lines(text: str) -> list[str]:
    """`text` cut at "\\n" only. Like `splitlines()`, a final "\\n" ends the last line rather
    than opening an empty one, so `split_lines("a\\nb\\n") == ["a", "b"]`."""
    if not text:
        return []
    lines = text.split(NEWLINE)
    if lines[-1] == "":
        lines.pop()
    return lines


def read_lines(path: Path) -> list[str]:
    """A UTF-8 JSON-lines file's lines (blank ones included: readers that number lines count
    them)."""
    return split_lines(path.read_text(encoding="utf-8"))


def whole_lines(data: bytes) -> tuple[list[bytes], int]:
    """The complete lines at the start of `data` (a tail read of a file another process is still
    appending to) and how many bytes they take; a last line without its "\\n" waits for the next
    read."""
    end = data.rfind(b"\n") + 1
    if not end:
        return [], 0
    return data[: end - 1].split(b"\n"), end


def encode_line(value: BaseModel | str) -> str:
    """One line of a JSON-lines file, its "\\n" included: a model (by alias) or JSON text."""
    text = value.model_dump_json(by_alias=True) if isinstance(value, BaseModel) else value
    if NEWLINE in text:
        raise ValueError("a JSON line holds a raw newline; it would read back as two lines")
    return text + NEWLINE


class JsonLinesAppender:
    """Appends lines to a JSON-lines file, each flushed as it is written. The file is opened at
    the first line (a run file that never gets a line is never made) unless `create`."""

    def __init__(self, path: Path, create: bool = False) -> None:
        self.path = path
        self._file: IO[str] | None = None
        if create:
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - close()

    def append(self, value: BaseModel | str) -> None:
        line = encode_line(value)
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - close()
        self._file.write(line)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def append_line(path: Path, value: BaseModel | str) -> None:
    """One line appended to `path` (opened and closed here: for files written a line at a time)."""
    line = encode_line(value)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
