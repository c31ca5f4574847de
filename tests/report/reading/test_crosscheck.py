"""Every report input checked against the runs it is given and refused in one line naming the
mismatch: another study's gate, a ledger without the run, two unrelated runs, judgments of an arm,
item or turn the runs do not have, a wrong provenance hash, gold for another item."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.report.generate import generate
from harness.report.reading.inputs import load_inputs
from ledger.ledger import Ledger
from tests.helpers.report_runs import turn, write_run
from tests.helpers.studies import harness


def a_run(folder: Path, run: str = "r-x") -> Path:
    turns = [turn(run, arm, item, n) for arm in ("a", "b") for item in ("i1", "i2") for n in (0, 1)]
    return write_run(folder, run, ["a", "b"], turns, [])


def refused(tmp_path: Path, run_dirs: list[Path], **given: Path) -> str:
    inputs = load_inputs(**given)
    with pytest.raises(HarnessError) as e:
        generate(run_dirs, inputs, out=tmp_path / "out", formats=("md",), resamples=100)
    assert "\n" not in e.value.message
    assert not (tmp_path / "out" / "report.md").exists()
    return str(e.value.message)


def accepted(tmp_path: Path, run_dirs: list[Path], **given: Path) -> None:
    inputs = load_inputs(**given)
    generate(run_dirs, inputs, out=tmp_path / "ok", formats=("md",), resamples=100)


def gate_file(path: Path, study: str) -> Path:
    path.write_text(
        json.dumps({"schema": 1, "study_sha256": study, "items_sha256": "b" * 64, "passed": True})
    )
    return path


def test_another_studys_gate_is_refused(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    message = refused(tmp_path, [run_dir], gate=gate_file(tmp_path / "g.json", "f" * 64))
    assert message.startswith("--gate is another study's gate (study SHA-256 ffffffffffff")
    accepted(tmp_path, [run_dir], gate=gate_file(tmp_path / "own.json", "a" * 64))


def test_a_ledger_without_the_run_is_refused(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    path = tmp_path / "ledger.jsonl"
    led = Ledger(path)
    led.open_stage("pilot", Decimal(5))
    led.reserve_run("some-other-run", Decimal(1), stage="pilot")
    led.close()
    message = refused(tmp_path, [run_dir], ledger=path)
    assert message == "--ledger holds no entry for run r-x: a ledger without the run"


def test_two_unrelated_runs_are_not_one_report(tmp_path: Path) -> None:
    first, second = a_run(tmp_path, "r-one"), a_run(tmp_path, "r-two")
    message = refused(tmp_path, [first, second])
    assert message.startswith(f"{second} does not resume r-one: two unrelated runs")
    header = json.loads((second / "run.json").read_text())
    header["study"]["study_sha256"] = "e" * 64
    (second / "run.json").write_text(json.dumps(header))
    assert f"{second} is another study's run (study_sha256 eeeeeeeeeeee" in refused(
        tmp_path, [first, second]
    )
    header["study"]["study_sha256"] = "a" * 64
    header["study"]["resumed_from"] = str(first.resolve())  # a resume of the first: one report
    (second / "run.json").write_text(json.dumps(header))
    accepted(tmp_path, [first, second])


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"arm": "c", "item": "i1", "turn": 0}, "arm 'c' is not an arm of these runs (a, b)"),
        ({"arm": "a", "item": "i9", "turn": 0}, "item 'i9' is not an item of these runs"),
        ({"arm": "a", "item": "i1", "turn": 5}, "arm 'a' has no turn 5 on item 'i1'"),
        ({"arm": "a", "item": "i1", "turn": 0, "run": "r-y"}, "run 'r-y' is not the run of"),
    ],
)
def test_judgments_of_what_the_runs_do_not_have_are_refused(
    tmp_path: Path, row: dict[str, object], message: str
) -> None:
    run_dir = a_run(tmp_path)
    path = tmp_path / "j.jsonl"
    good = {"arm": "b", "item": "i2", "turn": 1, "correct": True}
    path.write_text(json.dumps(good) + "\n" + json.dumps(row | {"correct": True}) + "\n")
    found = refused(tmp_path, [run_dir], judgments=path)
    assert found.startswith("--judgments j.jsonl line 2: ") and message in found


def test_a_wrong_provenance_hash_is_refused(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("the protocol\n")
    path = tmp_path / "provenance.jsonl"
    path.write_text(json.dumps({"name": "items.jsonl", "kind": "items", "sha256": "0" * 64}) + "\n")
    assert "--provenance line 1: items.jsonl has SHA-256 bbbbbbbbbbbb, not the 000000000000" in (
        refused(tmp_path, [run_dir], provenance=path)
    )
    path.write_text(json.dumps({"name": "notes.txt", "sha256": "1" * 64}) + "\n")
    assert "--provenance line 1: notes.txt has SHA-256" in refused(
        tmp_path, [run_dir], provenance=path
    )
    import hashlib

    rows = [
        {"name": "items.jsonl", "kind": "items", "sha256": "b" * 64},
        {"name": "notes.txt", "sha256": hashlib.sha256(notes.read_bytes()).hexdigest()},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    accepted(tmp_path, [run_dir], provenance=path)


def test_gold_and_pack_of_other_items_are_refused(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"item": "zz", "turn": 0, "gold": "x"}) + "\n")
    assert "--gold names item 'zz'" in refused(tmp_path, [run_dir], gold=gold)
    pack = tmp_path / "pack.jsonl"
    pack.write_text(json.dumps({"item": "i1", "cluster": "h1"}) + "\n")
    assert "--pack does not hold item 'i2'" in refused(tmp_path, [run_dir], pack=pack)


@pytest.mark.integration
def test_the_cli_refuses_in_one_line(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    gate = gate_file(tmp_path / "g.json", "f" * 64)
    done = harness("report", str(run_dir), "--out", str(tmp_path / "out"), "--gate", str(gate))
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "another study's gate" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()
