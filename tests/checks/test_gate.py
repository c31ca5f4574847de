"""The determinism gate: two record runs from fresh processes send the same requests, or the
gate names the JSON path that differs; a study's mask makes a volatile path pass; `harness
live` refuses without a passing gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.gate_studies import gate_study
from tests.helpers.studies import REPO, harness

pytestmark = pytest.mark.integration

QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"


def _gate(study: Path, runs: Path) -> tuple[int, str, dict[str, Any]]:
    done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
    records = sorted(runs.glob("*/gate.json"))
    assert records, done.stdout + done.stderr[-3000:]
    return done.returncode, done.stdout, json.loads(records[-1].read_text())


def test_the_quickstart_passes_the_gate(tmp_path: Path) -> None:
    code, out, gate = _gate(QUICKSTART, tmp_path)
    assert code == 0, out
    assert "PASSED" in out
    assert gate["schema"] == 1 and gate["passed"] and gate["divergences"] == []
    assert gate["counts"]["calls_compared"] == gate["counts"]["calls_matching"] > 0
    assert "metadata.user_id" in gate["masks"] and gate["excluded_headers"]
    assert gate["study_sha256"] and "compose_sha256" in gate and gate["images"] == {}
    assert len(gate["runs"]) == 2 and all(run["passed"] for run in gate["runs"])
    # Both gate runs are ordinary record runs with their own manifests.
    for run in gate["runs"]:
        header = json.loads((Path(run["run_dir"]) / "run.json").read_text())
        assert header["mode"] == "record" and header["manifest"]["files"]


def test_time_in_the_prompt_fails_naming_the_field_and_the_mask_fixes_it(tmp_path: Path) -> None:
    study = gate_study(tmp_path / "s", volatile="time")
    code, out, gate = _gate(study, tmp_path / "runs")
    assert code == 1, out
    assert not gate["passed"] and gate["divergences"]
    first = gate["divergences"][0]
    assert first["kind"] == "differs" and first["paths"] == ["messages.0.content"]
    assert "messages.0.content" in first["diff"] and "messages.0.content" in out
    # The two requests are there in full, as the proxy received them.
    assert first["first"]["body"]["messages"][1] == first["second"]["body"]["messages"][1]
    assert first["first"]["body"]["messages"][0] != first["second"]["body"]["messages"][0]
    assert gate["counts"]["divergences"] == 3  # one call per turn, three turns

    masked = gate_study(tmp_path / "m", volatile="time", mask=["messages.0.content"])
    code, out, gate = _gate(masked, tmp_path / "runs-masked")
    assert code == 0, out
    assert gate["passed"] and "messages.0.content" in gate["masks"]
    assert gate["study_masks"] == ["messages.0.content"]


def test_a_random_id_fails_naming_the_field(tmp_path: Path) -> None:
    study = gate_study(tmp_path / "s", volatile="uuid")
    code, _, gate = _gate(study, tmp_path / "runs")
    assert code == 1
    assert {tuple(d["paths"]) for d in gate["divergences"]} == {("metadata.trace_id",)}


def test_live_needs_a_passing_gate(tmp_path: Path) -> None:
    study = gate_study(tmp_path / "s")
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stderr[-3000:]
    done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs))
    assert done.returncode == 2
    assert "no passing determinism gate" in done.stderr and "harness gate" in done.stderr
