"""Every input checked against the runs it is given, refused in one line naming the mismatch.

A report that prints another study's gate as "PASSED", totals a ledger that never saw the run,
merges two unrelated runs or reports judgments of an arm that never ran would be wrong without
any sign of it; so each is refused before anything is written:
- the runs: one study (study and items SHA-256), each run after the first a resume of an earlier;
- `--gate`: the same study and items SHA-256 as the runs;
- `--ledger`: holds every run (a record run is never in a ledger: give none);
- `--judgments`: a set judged these runs (run ids, study SHA-256, turns.jsonl SHA-256), and every
  judgment's (run, arm, item, turn) is a turn of the runs; a JSONL line without `run` gets the run
  whose turn it is;
- `--gold`, `--pack`: items of the runs;
- `--provenance`: a material named as the study or its items has the runs' SHA-256, and one that
  names a file that exists has that file's SHA-256;
- `--scan`: a scan of one of the runs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.report.reading.inputs import Inputs
from harness.report.reading.judged import Judgment
from harness.report.reading.rundata import RunData
from rundir.runs import file_sha256

HINT = "give the inputs of this study's runs (each names the run or study it belongs to)"


def _refuse(message: str) -> None:
    raise HarnessError(message, hint=HINT)


def _short(sha: object) -> str:
    return str(sha or "none")[:12]


def check_inputs(data: RunData, inputs: Inputs) -> None:
    _check_runs(data)
    study = data.study
    sha, items_sha = study.get("study_sha256"), study.get("items_sha256")
    if inputs.gate is not None:
        gate_sha = inputs.gate.get("study_sha256")
        if gate_sha != sha or inputs.gate.get("items_sha256") != items_sha:
            _refuse(
                f"--gate is another study's gate (study SHA-256 {_short(gate_sha)}, these runs' "
                f"{_short(sha)})"
            )
    run_ids = [str(h.get("run_id")) for h in data.headers]
    if inputs.ledger is not None:
        missing = [r for r in run_ids if r not in inputs.ledger.runs]
        if missing:
            _refuse(f"--ledger holds no entry for run {missing[0]}: a ledger without the run")
    turns = {(t.run, t.arm, t.item, t.turn) for t in data.turns}
    by_turn: dict[tuple[str, str, int], list[str]] = {}
    for t in data.turns:
        by_turn.setdefault((t.arm, t.item, t.turn), []).append(t.run)
    if inputs.judgment_set is not None:
        _check_set(data, inputs, run_ids)
    if inputs.judgments is not None:
        inputs.judgments = [_placed(j, data, turns, by_turn) for j in inputs.judgments]
        no_duplicates(inputs.judgments)
    for p in inputs.pairs or []:
        for arm in (p.arm_a, p.arm_b):
            if (p.run, arm, p.item, p.turn) not in turns:
                _refuse(
                    f"--judgments: {p.source} judges arm {arm!r} on item {p.item!r} turn {p.turn} "
                    f"of run {p.run}, which these runs do not have"
                )
    items = {t.item for t in data.turns}
    for row in inputs.gold or []:
        if str(row["item"]) not in items:
            _refuse(f"--gold names item {row['item']!r}, which these runs do not have")
    if inputs.clusters is not None and not items <= set(inputs.clusters):
        missing_items = sorted(items - set(inputs.clusters))
        _refuse(f"--pack does not hold item {missing_items[0]!r} of these runs: another pack")
    _check_provenance(data, inputs)
    if inputs.void_arms is not None and (scan := inputs.given("scan")) is not None:
        scanned = _scan_run(scan.path)
        if scanned is not None and scanned not in run_ids:
            _refuse(f"--scan is a scan of run {scanned}, not of {', '.join(run_ids)}")


def _check_runs(data: RunData) -> None:
    first = data.headers[0]
    seen = [str(first.get("run_id"))]
    for run_dir, header in zip(data.run_dirs[1:], data.headers[1:], strict=True):
        study, base = header.get("study") or {}, first.get("study") or {}
        run_id = str(header.get("run_id"))
        for key in ("study_sha256", "items_sha256"):
            if study.get(key) != base.get(key):
                _refuse(
                    f"{run_dir} is another study's run ({key} {_short(study.get(key))}, "
                    f"{seen[0]}'s {_short(base.get(key))}): a report covers one study"
                )
        resumed = str(study.get("resumed_from") or "")  # the run it resumes, as a path
        if resumed not in seen and Path(resumed).name not in seen:
            _refuse(
                f"{run_dir} does not resume {' or '.join(seen)}: two unrelated runs are not one "
                "report (give a run and the runs that resumed it)"
            )
        seen.append(run_id)


def _check_set(data: RunData, inputs: Inputs, run_ids: list[str]) -> None:
    manifest = inputs.judgment_set
    assert manifest is not None
    sha = data.study.get("study_sha256")
    turns_sha = {
        str(h.get("run_id")): file_sha256(d / "turns.jsonl")
        for d, h in zip(data.run_dirs, data.headers, strict=True)
    }
    for ref in manifest.runs:
        if ref.run_id not in run_ids:
            _refuse(f"--judgments judged run {ref.run_id}, not one of {', '.join(run_ids)}")
        if ref.study_sha256 != sha:
            _refuse(
                f"--judgments judged another study (study SHA-256 {_short(ref.study_sha256)}, "
                f"these runs' {_short(sha)})"
            )
        if ref.turns_sha256 != turns_sha.get(ref.run_id):
            _refuse(
                f"--judgments judged other turns of run {ref.run_id} (turns.jsonl SHA-256 "
                f"{_short(ref.turns_sha256)}, now {_short(turns_sha.get(ref.run_id))})"
            )


def _placed(
    j: Judgment,
    data: RunData,
    turns: set[tuple[str, str, str, int]],
    by_turn: dict[tuple[str, str, int], list[str]],
) -> Judgment:
    arms = set(data.arm_names)
    items = {t.item for t in data.turns}
    where = f"--judgments {j.source}"
    if j.arm not in arms:
        _refuse(f"{where}: arm {j.arm!r} is not an arm of these runs ({', '.join(sorted(arms))})")
    if j.item not in items:
        _refuse(f"{where}: item {j.item!r} is not an item of these runs")
    if j.turn is None:
        runs = sorted({t.run for t in data.turns if t.arm == j.arm and t.item == j.item})
        return dataclasses.replace(j, run=j.run or runs[-1]) if runs else j
    runs = by_turn.get((j.arm, j.item, j.turn), [])
    if not runs:
        _refuse(f"{where}: arm {j.arm!r} has no turn {j.turn} on item {j.item!r} in these runs")
    if j.run is None:
        return dataclasses.replace(j, run=runs[-1])
    if (j.run, j.arm, j.item, j.turn) not in turns:
        _refuse(f"{where}: run {j.run!r} is not the run of arm {j.arm!r}'s turn {j.turn}")
    return j


def no_duplicates(judgments: list[Judgment]) -> None:
    seen: dict[tuple[Any, ...], str] = {}
    for j in judgments:
        key = (j.run, j.arm, j.item, j.turn, j.metric)
        if key in seen:
            _refuse(
                f"--judgments {j.source}: a second {j.metric!r} judgment of arm {j.arm!r}, item "
                f"{j.item!r}, turn {j.turn} (first: {seen[key]}): never overwritten"
            )
        seen[key] = j.source


def _check_provenance(data: RunData, inputs: Inputs) -> None:
    given = inputs.given("provenance")
    if inputs.provenance is None or given is None:
        return
    study = data.study
    study_name = Path(str(study.get("study_path") or "study.toml")).name
    known = {"study": study.get("study_sha256"), "items": study.get("items_sha256")}
    for lineno, row in enumerate(inputs.provenance, 1):
        name, kind = str(row["name"]), str(row.get("kind") or "")
        expected = known.get(kind)
        if expected is None and Path(name).name == study_name:
            expected = known["study"]
        if expected is None:
            path = Path(name) if Path(name).is_absolute() else given.path.parent / name
            expected = file_sha256(path) if path.is_file() else None
        if expected is not None and str(row["sha256"]) != expected:
            _refuse(
                f"--provenance line {lineno}: {name} has SHA-256 {_short(expected)}, not the "
                f"{_short(row['sha256'])} given"
            )


def _scan_run(path: Path) -> str | None:
    import json

    try:
        return str(json.loads(path.read_text(encoding="utf-8")).get("run_id"))
    except (OSError, ValueError, AttributeError):
        return None
