from datetime import datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from rundir.turns.ingestions import IngestionRecord, SnapshotRecord, kind_of, read_ingestions
from rundir.turns.turns import TurnLog, TurnRecord, read_turns


def _ingestion(index: int) -> IngestionRecord:
    return IngestionRecord(
        run="r",
        item="q1",
        arm="a",
        history="h.q1",
        session=f"s{index}",
        index=index,
        date=datetime(2023, 5, 20, 2, 21),
        messages=2,
        outcome="done",
        stored=1,
        seconds=0.1,
    )


def test_turns_jsonl_keeps_answers_and_ingestions_apart(tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    log = TurnLog(path)
    log.append(_ingestion(0))
    log.append(_ingestion(1))
    snapshot = SnapshotRecord(
        run="r", item="q1", arm="a", history="h.q1", sha256="0" * 64, files=1, bytes=3,
        seconds=0.2, path="snapshots/a/h.q1",
    )  # fmt: skip
    log.append(snapshot)
    log.append(TurnRecord(run="r", item="q1", arm="a", turn=0, text="Pepper", outcome="done"))
    log.close()
    assert [t.text for t in read_turns(path)] == ["Pepper"]  # an ingestion is not an answer
    assert [type(r).__name__ for r in read_ingestions(path)] == [
        "IngestionRecord",
        "IngestionRecord",
        "SnapshotRecord",
    ]


def test_only_the_known_kinds_are_set_apart() -> None:
    assert kind_of('{"kind": "ingestion"}') == "ingestion"
    assert kind_of('{"text": "say \\"kind\\" twice"}') is None  # a turn's text may say it
    assert kind_of('{"kind": "lunch"}') is None  # then read as a turn, and refused as one


def test_an_ingestion_line_is_never_misread_as_a_turn() -> None:
    with pytest.raises(ValidationError):
        TurnRecord.model_validate_json(_ingestion(0).model_dump_json(by_alias=True))
