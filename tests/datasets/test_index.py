"""A LongMemEval file read lazily (harness/datasets/index.py): the index's offsets hold each
question exactly (multi-byte text and line separators across read chunks too), it is cached by
the file's hash and rebuilt when the file changes, a draw decodes and checks only the drawn
questions and gives the same items as loading the whole file, and drawing a few questions from a
large file takes a small fraction of its size in memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.datasets import longmemeval
from harness.datasets.draw import draw
from harness.datasets.index import (
    IndexEntry,
    build_index,
    cache_dir,
    longmemeval_index,
    read_entries,
)
from harness.datasets.model import DatasetError, Memory
from rundir.runs.shards import shard_items
from tests.datasets.fixtures import LONGMEMEVAL_TYPES, longmemeval_entry


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))


def _entries(count: int) -> list[dict[str, object]]:
    entries = [longmemeval_entry(n, LONGMEMEVAL_TYPES[n % 3]) for n in range(count)]
    for n, entry in enumerate(entries):  # text whose UTF-8 is longer than its characters
        entry["question"] = f"Où est Zoë\u2028 ({n}) 🐕 " + "é" * (n * 37 % 300)
    return entries


def _write(path: Path, entries: list[dict[str, object]], **dump: object) -> Path:
    path.write_text(json.dumps(entries, **dump), encoding="utf-8")  # type: ignore[arg-type]
    return path


@pytest.mark.parametrize("ascii_only", [True, False])
def test_each_question_reads_back_from_its_offsets_across_chunks(
    tmp_path: Path, ascii_only: bool
) -> None:
    entries = _entries(40)
    path = _write(tmp_path / "s.json", entries, indent=1, ensure_ascii=ascii_only)
    for chunk in (7, 1000, 2**20):  # chunks cut questions and multi-byte characters apart
        index = build_index(path, chunk)
        assert [e.question_id for e in index] == [e["question_id"] for e in entries]
        assert read_entries(path, index) == entries


def test_the_index_is_cached_by_the_files_hash(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.json", _entries(6))
    first = longmemeval_index(path)
    (cached,) = cache_dir().iterdir()
    # A cache is read, not rebuilt: an entry changed in it is what the next look returns.
    data = json.loads(cached.read_text())
    data["entries"][0][1] = "from-the-cache"
    cached.write_text(json.dumps(data))
    assert longmemeval_index(path)[0].question_type == "from-the-cache"
    # Another file (same size, other bytes) has another hash: indexed afresh.
    _write(path, list(reversed(_entries(6))))
    assert [e.question_id for e in longmemeval_index(path)] == [
        e.question_id for e in reversed(first)
    ]
    assert len(list(cache_dir().iterdir())) == 2


def test_a_draw_reads_only_the_drawn_questions_and_matches_the_whole_load(tmp_path: Path) -> None:
    entries = _entries(30)
    path = _write(tmp_path / "s.json", entries)
    lazy = longmemeval.load_drawn(path, 9, 7, "question_type", None)
    whole = draw(longmemeval.load(path), 9, 7, "question_type", None)
    assert _full(lazy.memories) == _full(whole.memories)
    assert (lazy.available, lazy.drawn) == (whole.available, whole.drawn)
    # Break every question the draw did not take: the same draw still loads.
    drawn = {m.question.question_id for m in lazy.memories}
    for entry in entries:
        if entry["question_id"] not in drawn:
            entry["haystack_sessions"][0][0]["role"] = "robot"  # type: ignore[index]
    _write(path, entries)
    again = longmemeval.load_drawn(path, 9, 7, "question_type", None)
    assert [m.question for m in again.memories] == [m.question for m in lazy.memories]
    with pytest.raises(DatasetError, match=r"role: 'robot' is not user or assistant"):
        longmemeval.load(path)


def _full(memories: list[Memory]) -> list[tuple[object, ...]]:
    return [(m.source, m.question, m.history.full().model_dump()) for m in memories]


def test_drawn_histories_are_held_without_their_text_until_their_turn(tmp_path: Path) -> None:
    """A study drawing every question holds each history's session ids and dates, no message:
    what it holds does not grow with the histories' text (LongMemEval-S: ~265 MB of it)."""
    entries = _entries(12)
    path = _write(tmp_path / "s.json", entries)
    drawn = longmemeval.load_drawn(path, None, 0, None, None)
    assert len(drawn.memories) == 12
    held = [m for memory in drawn.memories for s in memory.history.sessions for m in s.messages]
    assert held == []
    assert [len(m.history.sessions) for m in drawn.memories] == [
        len(e["haystack_sessions"])  # type: ignore[arg-type]
        for e in entries
    ]
    # Each history's messages are read back when asked for, the same as a whole load gives.
    assert _full(drawn.memories) == _full(longmemeval.load(path))
    # A file changed after the study was loaded is refused, not read at stale offsets.
    _write(path, list(reversed(entries)))
    with pytest.raises(DatasetError, match="changed since the study was loaded"):
        drawn.memories[0].history.full()


def test_loading_reads_no_question_and_a_run_reads_only_those_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A study is planned from the index alone (each question's head): a shard, which runs some
    of the drawn questions, reads and checks only those, each when its history is asked for; a
    bad turn in a question it does not run is not its problem, and stops the one that runs it."""
    entries = _entries(10)
    entries[7]["haystack_sessions"][1][0]["role"] = "robot"  # type: ignore[index]
    path = _write(tmp_path / "s.json", entries)
    longmemeval_index(path)  # built (reading every question once) and cached
    read: list[str] = []

    def counted(path: Path, wanted: list[IndexEntry]) -> list[object]:
        read.extend(e.question_id for e in wanted)
        return read_entries(path, wanted)

    monkeypatch.setattr(longmemeval, "read_entries", counted)
    drawn = longmemeval.load_drawn(path, None, 0, None, None)
    assert len(drawn.memories) == 10 and read == []
    # What the plan needs is there, as a whole load gives it: the questions, their dates,
    # gold and evidence, each history's sessions in date order.
    good = [m for m in longmemeval.load(_write(tmp_path / "ok.json", _entries(10)))]
    assert [m.question for m in drawn.memories] == [m.question for m in good]
    assert [m.history.model_dump() for m in drawn.memories] == [
        m.history.model_copy(
            update={"sessions": [s.model_copy(update={"messages": []}) for s in m.history.sessions]}
        ).model_dump()
        for m in good
    ]
    mine = shard_items(drawn.memories, 1, 2)  # positions 0, 2, 4, 6, 8
    assert [m.history.full() for m in mine] == [m.history for m in shard_items(good, 1, 2)]
    assert read == [m.question.question_id for m in mine]
    theirs = shard_items(drawn.memories, 2, 2)
    with pytest.raises(DatasetError, match=r"\[7\]\.haystack_sessions\[1\]\[0\]\.role: 'robot'"):
        [m.history.full() for m in theirs]


def test_a_bad_head_refuses_only_a_draw_that_takes_its_question(tmp_path: Path) -> None:
    entries = _entries(6)
    entries[4]["question_date"] = "2023/05/30 (Mon) 23:40"  # a Tuesday
    path = _write(tmp_path / "s.json", entries)
    assert [e.problem is None for e in longmemeval_index(path)] == [True] * 4 + [False, True]
    drawn = longmemeval.load_drawn(path, 2, 0, None, None)
    assert 4 not in {int(m.question.question_id[1:]) for m in drawn.memories}
    with pytest.raises(DatasetError, match=r"\[4\]\.question_date: .* is a Tue, not a Mon"):
        longmemeval.load_drawn(path, None, 0, None, None)


def test_every_questions_id_and_type_are_still_checked(tmp_path: Path) -> None:
    entries = _entries(5)
    entries[3]["question_type"] = "gossip"
    path = _write(tmp_path / "s.json", entries)
    with pytest.raises(DatasetError, match=r"\[3\]\.question_type: 'gossip' is not one of"):
        longmemeval.load_drawn(path, 1, 0, None, None)
    entries[3] = dict(entries[1])
    _write(path, entries)
    with pytest.raises(DatasetError, match=r"\[3\]\.question_id: 'q001' appears twice"):
        longmemeval.load_drawn(path, 1, 0, None, None)
    path.write_text('[{"question_id": "q0", "question_type": "multi-session"}, {"cut": ')
    with pytest.raises(DatasetError, match=r"not JSON \(\[1\]"):
        longmemeval.load_drawn(path, 1, 0, None, None)


# VmHWM, not getrusage's ru_maxrss: Linux carries the latter over exec from the forking parent.
PEAK = """
import sys
from pathlib import Path
from harness.datasets import longmemeval
if sys.argv[2] == "lazy":
    assert len(longmemeval.load_drawn(Path(sys.argv[1]), 3, 1, None, None).memories) == 3
elif sys.argv[2] == "all":  # every question drawn: still held without its history's text
    assert len(longmemeval.load_drawn(Path(sys.argv[1]), None, 1, None, None).memories) == 300
else:
    assert len(longmemeval.load(Path(sys.argv[1]))) == 300
status = Path("/proc/self/status").read_text().splitlines()
print(next(int(x.split()[1]) * 1024 for x in status if x.startswith("VmHWM:")))
"""


def test_drawing_from_a_large_file_takes_a_fraction_of_its_size_in_memory(tmp_path: Path) -> None:
    entries = []
    for n in range(300):  # ~80 MB: each question's history a few hundred kB
        entry = longmemeval_entry(n, LONGMEMEVAL_TYPES[n % 3])
        entry["haystack_sessions"][0][1]["content"] = f"{n} " + "word " * 50_000
        entries.append(entry)
    path = _write(tmp_path / "big.json", entries)
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}

    def peak(how: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", PEAK, str(path), how], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout)

    # Building the index, then from the cache, against loading the whole file (the same
    # interpreter and imports in each).
    lazy = [peak("lazy"), peak("lazy")]
    whole = peak("whole")
    assert max(lazy) * 3 < whole, (lazy, whole, path.stat().st_size)
    every = peak("all")
    assert every * 3 < whole, (every, whole, path.stat().st_size)
