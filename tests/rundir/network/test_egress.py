"""rundir/network/egress.py: egress.jsonl entries are models; the file is replaced whole, read back
validated, and an entry keeps only the fields its source has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.errors import RunDirError
from rundir.network.egress import EgressEntry, read_egress, write_egress


def test_entries_round_trip_with_only_their_fields(tmp_path: Path) -> None:
    guard = EgressEntry(arm="a", destination="10.0.0.1:80", time="t1", source="guard", line=3)
    dns = EgressEntry(arm="b", destination="x.test", time="t2", source="dns", query_type="A")
    write_egress(tmp_path / "egress.jsonl", [guard, dns])
    lines = [json.loads(x) for x in (tmp_path / "egress.jsonl").read_text().splitlines()]
    assert lines[0] == {
        "schema": 1,
        "arm": "a",
        "destination": "10.0.0.1:80",
        "time": "t1",
        "source": "guard",
        "line": 3,
    }
    assert read_egress(tmp_path / "egress.jsonl") == [guard, dns]
    assert guard.as_dict() == lines[0]


def test_no_file_is_no_entries_and_a_damaged_one_is_refused(tmp_path: Path) -> None:
    assert read_egress(tmp_path / "egress.jsonl") == []
    (tmp_path / "egress.jsonl").write_text('{"schema": 1, "arm": "a"}\n')
    with pytest.raises(RunDirError, match=r"egress\.jsonl:1: not an egress entry"):
        read_egress(tmp_path / "egress.jsonl")


def test_an_unknown_source_is_refused() -> None:
    with pytest.raises(ValueError, match="source"):
        EgressEntry.model_validate({"arm": "a", "destination": "?", "time": "?", "source": "x"})
