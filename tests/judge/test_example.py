"""examples/judged end to end, as its README says: two record-mode runs of the study (the real
`harness record`, arms as local processes), then `harness judge` with the two stub judges, an A/A
control on the second run, and `harness judge --verify`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rundir.judgments.files import read_manifest
from rundir.judgments.seal import open_seal

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "judged"


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-level", "warning", *args],
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_judged_example_runs_end_to_end_in_record_mode(tmp_path: Path) -> None:
    folder = tmp_path / "judged"
    shutil.copytree(EXAMPLE, folder)
    study = folder / "study.toml"
    # The example's ledger sits at the checkout's root; the test keeps its own.
    study.write_text(study.read_text().replace('"../../ledger.jsonl"', '"ledger.jsonl"'))
    runs = tmp_path / "runs"
    for _ in range(2):
        done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stderr[-2000:]
    first, second = sorted(runs.iterdir())
    out = tmp_path / "set"
    done = harness(
        "judge", str(first), "--aa-run", str(second), "--aa-arm", "bare",
        "--rubrics", str(folder / "rubrics"), "--judges", str(folder / "judges.toml"),
        "--out", str(out), "--seed", "1", "--controls-per-kind", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "axis better_reply: PASSED" in done.stdout and "axis grounded: PASSED" in done.stdout
    manifest = read_manifest(out)
    assert [aa.pairs for aa in manifest.aa] == [30]
    assert {b.bar for b in manifest.calibration} == {
        "strong detection", "mild detection", "clean flagged", "pairwise detection",
        "same verdict both orders", "kappa", "padding read the same",
    }  # fmt: skip
    seal = open_seal(out, tmp_path / "set.seal.json")
    assert {(s.run, s.arm) for s in seal.codes.values()} == {
        (first.name, "bare"), (first.name, "retrieval"), (second.name, "bare"),
    }  # fmt: skip
    checked = harness("judge", "--verify", str(out))
    assert checked.returncode == 0, checked.stdout
