"""A LongMemEval file read lazily: an index of its questions (id, type, byte offsets and the
question's head: harness/datasets/head.py), built once per file and cached by the file's SHA-256,
so loading a study reads no question, and a run (or a shard) reads only those it runs.

LongMemEval-S is ~265 MB of JSON, each question with its own ~50-session history; loading it
whole to draw from it took 12 s and 430-740 MB of the harness's memory in every run and shard
(issue 37). Building the index decodes one question at a time from a sliding window (memory:
one question and a read chunk); reading a drawn question seeks to its offsets and decodes it
alone. The cache lives in `$HARNESS_CACHE_DIR/datasets` (default `~/.cache/harness/datasets`),
one small JSON file per dataset hash; a cache that cannot be read or written is rebuilt or
skipped, never trusted blindly (it names its file's hash and size).
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.datasets.head import Head, read_head
from harness.datasets.model import DatasetError

INDEX_VERSION = 2
CHUNK = 4 * 2**20  # bytes read at a time while indexing
_HASH_ONCE_BYTES = 16 * 2**20  # files at least this large are hashed once per process


@dataclass(frozen=True)
class IndexEntry:
    question_id: str
    question_type: str
    start: int  # byte offsets of the question's JSON object in the file
    end: int
    head: Head | None = None  # None when its fields are bad: `problem` names the first
    problem: str | None = None


def file_sha256(path: Path) -> str:
    """The file's SHA-256, read in chunks (never the whole file in memory). A large file
    unchanged (path, size, mtime) is hashed once per process: the study's items hash and the
    index's key are the same hash of a file of hundreds of MB. (A small one is hashed each
    time: rewritten within the file system's timestamp granularity it could look unchanged.)"""
    try:
        info = path.stat()
        if info.st_size < _HASH_ONCE_BYTES:
            return _sha256.__wrapped__(path, info.st_size, info.st_mtime_ns)
        return _sha256(path.resolve(), info.st_size, info.st_mtime_ns)
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e}") from None


@functools.lru_cache(maxsize=16)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def cache_dir() -> Path:
    base = os.environ.get("HARNESS_CACHE_DIR") or str(Path.home() / ".cache" / "harness")
    return Path(base) / "datasets"


def longmemeval_index(path: Path, digest: str | None = None) -> list[IndexEntry]:
    """Every question's id, type and offsets, in the file's order: from the cache when it holds
    this file's hash, else built (and cached)."""
    digest = digest or file_sha256(path)
    size = path.stat().st_size
    cached = cache_dir() / f"longmemeval-{digest}.json"
    entries = _read_cache(cached, digest, size)
    if entries is None:
        entries = build_index(path)
        _write_cache(cached, digest, size, entries)
    return entries


def build_index(path: Path, chunk: int = CHUNK) -> list[IndexEntry]:
    """Decode the file's top-level list one element at a time; keep each one's offsets, id and
    type. Raises DatasetError naming the first element that is not a question object."""
    decoder = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    entries: list[IndexEntry] = []
    text, at, consumed = "", 0, 0  # the window, a position in it, bytes before the window
    eof = False
    with path.open("rb") as f:

        def more() -> bool:
            nonlocal text, eof
            data = f.read(chunk)
            eof = not data
            try:
                text += utf8.decode(data, final=eof)
            except UnicodeDecodeError as e:
                raise DatasetError(f"cannot read {path}: {e}") from None
            return not eof

        def skip_space() -> None:
            nonlocal at
            while True:
                while at < len(text) and text[at] in " \t\r\n":
                    at += 1
                if at < len(text) or not more():
                    return

        skip_space()
        if text[at : at + 1] != "[":
            raise DatasetError(f"{path}: not LongMemEval: the file is not a JSON list of questions")
        at += 1
        n = 0
        while True:
            skip_space()
            if text[at : at + 1] == "]":
                break
            if n:
                if text[at : at + 1] != ",":
                    raise DatasetError(f"{path}: not JSON (after question [{n - 1}])")
                at += 1
                skip_space()
            while True:
                try:
                    value, end = decoder.raw_decode(text, at)
                    break
                except json.JSONDecodeError as e:
                    if eof or not more():
                        raise DatasetError(f"{path}: not JSON ([{n}]: {e.msg})") from None
            start = consumed + len(text[:at].encode("utf-8"))
            stop = start + len(text[at:end].encode("utf-8"))
            entries.append(_entry(value, f"{path}: [{n}]", start, stop))
            n += 1
            # Drop what is behind: the window holds about one question and one chunk.
            consumed = stop
            text, at = text[end:], 0
    return entries


def _entry(value: Any, where: str, start: int, end: int) -> IndexEntry:
    if not isinstance(value, dict):
        raise DatasetError(f"{where}: not a JSON object")
    qid, qtype = value.get("question_id"), value.get("question_type")
    if not isinstance(qid, str):
        raise DatasetError(f"{where}.question_id: missing or not a string")
    if not isinstance(qtype, str):
        raise DatasetError(f"{where}.question_type: missing or not a string")
    try:
        return IndexEntry(qid, qtype, start, end, read_head(value, where))
    except DatasetError as e:  # refused only by a draw that takes this question
        return IndexEntry(qid, qtype, start, end, None, str(e))


def read_entries(path: Path, entries: list[IndexEntry]) -> list[Any]:
    """The JSON objects at the entries' offsets, in the order given: one question each."""
    values = []
    try:
        with path.open("rb") as f:
            for entry in entries:
                f.seek(entry.start)
                values.append(json.loads(f.read(entry.end - entry.start)))
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e}") from None
    except ValueError as e:
        raise DatasetError(f"{path}: the index does not match the file ({e})") from None
    return values


def _read_cache(cached: Path, digest: str, size: int) -> list[IndexEntry] | None:
    try:
        data = json.loads(cached.read_text(encoding="utf-8"))
        if data["version"] != INDEX_VERSION or data["sha256"] != digest or data["size"] != size:
            return None
        return [
            IndexEntry(q, t, s, e, Head.of_row(head) if head else None, problem)
            for q, t, s, e, head, problem in data["entries"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(cached: Path, digest: str, size: int, entries: list[IndexEntry]) -> None:
    rows = [
        [e.question_id, e.question_type, e.start, e.end, e.head and e.head.row(), e.problem]
        for e in entries
    ]
    data = {"version": INDEX_VERSION, "sha256": digest, "size": size, "entries": rows}
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(cached)
    except OSError:
        pass  # a read-only home: the next run indexes again
