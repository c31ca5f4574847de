"""rundir/jsonlines.py: one framing, "\n" only, for every run file; texts holding the characters
str.splitlines() also ends a line at (U+2028, U+2029, U+0085, ...) come back whole."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from arms.seam import LineSplitter
from rundir.jsonlines import (
    JsonLinesAppender,
    append_line,
    encode_line,
    read_lines,
    split_lines,
    whole_lines,
)
from rundir.network.egress import EgressEntry, read_egress, write_egress
from rundir.network.rtt import RttLog, RttProbe, read_probes
from rundir.network.strays_seen import StraySeen, append_seen, read_seen
from rundir.runs.voids import VoidRecord, append_void, read_voids
from rundir.turns.ingestions import IngestionRecord, read_ingestions
from rundir.turns.questions import QuestionLog, QuestionRecord, read_questions
from rundir.turns.turns import TurnLog, TurnRecord, read_turns

# Every character str.splitlines() ends a line at besides "\n" and "\r".
SEPARATORS = ["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c"]
TEXT = "a" + "b".join(SEPARATORS) + "z"


def test_split_lines_ends_a_line_at_newline_only() -> None:
    assert len(TEXT.splitlines()) == len(SEPARATORS) + 1  # what the readers used to do
    assert split_lines(f"{TEXT}\n{TEXT}\n") == [TEXT, TEXT]
    assert split_lines(f"{TEXT}\n\nx") == [TEXT, "", "x"]  # a blank line is kept (line numbers)
    assert split_lines("") == [] and split_lines("\n") == [""]


def test_whole_lines_leave_a_torn_last_line_for_the_next_read() -> None:
    data = f"{TEXT}\n{TEXT}\n{TEXT[:3]}".encode()
    lines, end = whole_lines(data)
    assert [line.decode() for line in lines] == [TEXT, TEXT]
    assert data[end:] == TEXT[:3].encode()
    assert whole_lines(b"torn") == ([], 0)


@pytest.mark.parametrize("piece", [1, 2, 5, 1000])
def test_the_seam_splitter_frames_the_same_lines_at_any_chunking(piece: int) -> None:
    stream = f"{TEXT}\n\n{TEXT}\nlast"
    splitter = LineSplitter()
    lines = [
        line for i in range(0, len(stream), piece) for line in splitter.feed(stream[i : i + piece])
    ]
    assert lines + splitter.end() == split_lines(stream)


def test_an_appender_refuses_a_raw_newline_and_makes_its_file_at_the_first_line(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="raw newline"):
        encode_line('{"a": 1}\n{"b": 2}')
    appender = JsonLinesAppender(tmp_path / "x.jsonl")
    assert not appender.path.exists()
    appender.append('{"text": "' + TEXT + '"}')
    append_line(appender.path, '{"n": 2}')
    appender.close()
    assert read_lines(appender.path) == ['{"text": "' + TEXT + '"}', '{"n": 2}']


def test_every_run_file_gives_back_a_text_holding_line_separators(tmp_path: Path) -> None:
    turns = TurnLog(tmp_path / "turns.jsonl")
    turn = TurnRecord(run="r", item="i", arm="a", turn=0, text=TEXT, outcome="done", error=TEXT)
    turns.append(turn)
    turns.append(turn.model_copy(update={"turn": 1}))
    turns.close()
    assert [t.text for t in read_turns(tmp_path / "turns.jsonl")] == [TEXT, TEXT]

    questions = QuestionLog(tmp_path / "questions.jsonl")
    question = QuestionRecord(
        run="r", item="i", arm="a", question_id="q", source="jsonl", history="h",
        abstention=False, gold=TEXT, answer=TEXT, outcome="done",
    )  # fmt: skip
    questions.append(question)
    questions.close()
    assert read_questions(tmp_path / "questions.jsonl") == [question]

    seen = StraySeen(
        run="r", arm="a", destination=TEXT, source="guard", time="t", during="turn"
    )  # fmt: skip
    append_seen(tmp_path / "strays_seen.jsonl", seen)
    assert read_seen(tmp_path / "strays_seen.jsonl") == [seen]

    probe = RttProbe(
        run="r", kind="seam", target="a", phase="start", method="tcp_connect", time="t", error=TEXT
    )  # fmt: skip
    RttLog(tmp_path / "rtt.jsonl").append(probe)
    assert read_probes(tmp_path / "rtt.jsonl") == [probe]

    void = VoidRecord(run_id="r", voided="t", items=["i"], reason=TEXT)
    append_void(tmp_path, void)
    assert read_voids(tmp_path) == [void]

    ingestion = IngestionRecord(
        run="r", item="i", arm="a", history="h", session="s", index=0,
        date=datetime(2024, 5, 1, tzinfo=UTC), messages=1, outcome="error", error=TEXT,
    )  # fmt: skip
    append_line(tmp_path / "ingestions.jsonl", ingestion)
    assert read_ingestions(tmp_path / "ingestions.jsonl") == [ingestion]

    entry = EgressEntry(arm="a", destination="h:1", time="t", source="guard", raw=TEXT)
    write_egress(tmp_path / "egress.jsonl", [entry, entry])
    assert read_egress(tmp_path / "egress.jsonl") == [entry, entry]
