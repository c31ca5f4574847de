"""rundir/model.py: the schema-upgrade hook. An old record is upgraded step by step, a record
newer than this harness is refused with the fix in the message, the current one round-trips."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field, ValidationError

from rundir.calls.calllog import CallRecord
from rundir.errors import SchemaTooNew
from rundir.model import RunDirModel, Upgradable, Upgrade, schema_too_new
from rundir.network.rtt import RttProbe
from rundir.network.strays_seen import StraySeen
from rundir.runs.gate_record import GateRecord
from rundir.runs.header import RunHeader
from rundir.runs.manifest import Manifest
from rundir.turns.turns import TurnRecord

TURN = {"item": "i1", "arm": "a", "turn": 1, "text": "hello", "outcome": "done"}


class Weather(Upgradable):
    """A record at schema 3 whose field was renamed at 1 (`temp`) and again at 2 (`celsius`),
    and which gained a unit at 3."""

    upgrades: ClassVar[dict[int, Upgrade]] = {
        0: lambda r: {**{k: v for k, v in r.items() if k != "t"}, "temp": r["t"]},
        1: lambda r: {**{k: v for k, v in r.items() if k != "temp"}, "celsius": r["temp"]},
        2: lambda r: {**r, "unit": "C"},
    }
    schema_: Literal[3] = Field(3, alias="schema")
    celsius: float
    unit: str


def test_an_old_record_is_upgraded_step_by_step() -> None:
    assert Weather.model_validate({"schema": 0, "t": 21.5}) == Weather(celsius=21.5, unit="C")
    assert Weather.model_validate({"schema": 2, "celsius": 3}) == Weather(celsius=3, unit="C")


def test_a_turn_line_of_schema_0_is_upgraded() -> None:
    record = TurnRecord.model_validate_json(
        '{"schema": 0, "run_id": "r1", "item": "i1", "arm": "a", "turn": 1, "text": "hello",'
        ' "outcome": "done"}'
    )
    assert record.run == "r1" and record.schema_ == 1
    assert '"schema":1,"run":"r1"' in record.model_dump_json(by_alias=True)


RECORDS = [TurnRecord, Weather, RunHeader, CallRecord, GateRecord, Manifest, RttProbe, StraySeen]


@pytest.mark.parametrize("model", RECORDS)
def test_a_newer_record_is_refused_with_the_fix(model: type[RunDirModel]) -> None:
    with pytest.raises(ValidationError) as raised:
        model.model_validate({"schema": model.current_schema() + 1, **TURN})
    too_new = schema_too_new(raised.value)
    assert isinstance(too_new, SchemaTooNew)
    assert f"schema {model.current_schema() + 1}" in str(too_new)
    assert "upgrade harness" in str(too_new)


def test_a_version_with_no_upgrade_is_refused() -> None:
    class Later(Upgradable):
        upgrades: ClassVar[dict[int, Upgrade]] = {1: lambda r: r}
        schema_: Literal[2] = Field(2, alias="schema")

    with pytest.raises(ValidationError, match="cannot upgrade it"):
        Later.model_validate({"schema": 0})
    assert Later.model_validate({"schema": 1}).schema_ == 2


def test_the_current_version_round_trips_unchanged() -> None:
    line = TurnRecord(run="r1", **TURN).model_dump_json(by_alias=True)
    assert TurnRecord.model_validate_json(line).model_dump_json(by_alias=True) == line
    assert line.startswith('{"schema":1,"run":"r1",')
    # A line without the key keeps meaning the current version, as before the hook.
    assert TurnRecord.model_validate({"run": "r1", **TURN}).schema_ == 1


def test_a_schema_that_is_no_number_is_named_by_the_field() -> None:
    data: dict[str, Any] = {"schema": "1", "run": "r1", **TURN}
    with pytest.raises(ValidationError, match="schema"):
        TurnRecord.model_validate(data)


def test_upgrades_on_a_model_without_the_hook_are_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="Upgradable"):

        class Forgot(RunDirModel):
            upgrades: ClassVar[dict[int, Upgrade]] = {0: lambda r: r}
            schema_: Literal[1] = Field(1, alias="schema")
