"""rundir/network/probe_file.py: probe.json round-trips; a damaged or newer one is refused, not
ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from rundir.errors import RunDirError
from rundir.network.probe_file import ProbeCheck, ProbeDecision, read_probe, write_probe


def _decision(passed: bool) -> ProbeDecision:
    checks = [
        ProbeCheck(name="thinking_honoured", passed=passed, detail="a bad value answered 200")
    ]
    return ProbeDecision(
        probed="2026-12-05T10:00:00Z",
        base_url="http://proxy/anthropic",
        model="claude-sonnet-4-6",
        checks=checks,
        route="compat" if passed else "messages",
    )


def test_round_trip_and_the_reasons_of_a_fallback(tmp_path: Path) -> None:
    write_probe(tmp_path / "probe.json", _decision(False))
    back = read_probe(tmp_path / "probe.json")
    assert back == _decision(False) and back.fell_back
    assert back.reasons() == "thinking_honoured: a bad value answered 200"
    assert read_probe(tmp_path / "absent.json") is None


@pytest.mark.parametrize("text", ["{", '{"schema": 1}', '{"schema": 1, "route": "sideways"}'])
def test_a_damaged_file_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / "probe.json").write_text(text)
    with pytest.raises(RunDirError):
        read_probe(tmp_path / "probe.json")


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    data = _decision(True).model_dump_json(by_alias=True).replace('"schema":1', '"schema":2')
    (tmp_path / "probe.json").write_text(data)
    with pytest.raises(RunDirError, match=r"schema 2"):
        read_probe(tmp_path / "probe.json")
