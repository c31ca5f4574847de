"""The real mem0 and Graphiti arms under `--isolation local` with the default `[limits]`
(harness/isolation/local/memory_cgroup.py): both start and recall the user's facts, where the
RLIMIT_DATA this backend used to set stopped Graphiti at every turn (Kuzu reserves 8 TiB of
address space up front); the memory bound is still held, by a cgroup, and run.json says how.

The engines run under their own venv (`.cache/engines-venv`, scripts/engine-venvs; or
HARNESS_ENGINES_PYTHON), as tests/stubs/test_engines.py drives them; the study is the shipped
engines example's items with its two engine arms, record mode (the default stubs)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.isolation.local.memory_cgroup import find
from rundir.runs.limits import ResourceLimits
from tests.helpers.studies import REPO, harness, header, only_run, read_jsonl
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]

ENGINES_PYTHON = Path(
    os.environ.get("HARNESS_ENGINES_PYTHON", REPO / ".cache" / "engines-venv" / "bin" / "python")
)
ITEMS = REPO / "examples" / "engines" / "items.jsonl"


def _engines_missing() -> str | None:
    if not ENGINES_PYTHON.exists():
        return f"no engines venv at {ENGINES_PYTHON}"
    found = subprocess.run(
        [str(ENGINES_PYTHON), "-c", "import mem0, graphiti_core, kuzu"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return None if found.returncode == 0 else f"engines venv lacks a package: {found.stderr[-300:]}"


@pytest.mark.skipif(find()[0] is None, reason=f"no memory cgroup: {find()[1]}")
def test_mem0_and_graphiti_recall_under_the_local_backends_default_limits(tmp_path: Path) -> None:
    missing = _engines_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}: .ci/run must create it (scripts/engine-venvs)")
        pytest.skip(missing)
    env = {"PYTHONPATH": str(REPO), "ARM_MODEL": "gpt-4.1-mini", "ARM_MAX_TOKENS": "256"}
    telemetry = {"MEM0_TELEMETRY": "false", "GRAPHITI_TELEMETRY_ENABLED": "false"}
    study = (
        StudyBuilder(name="engines-local", items=read_jsonl(ITEMS))
        .arm("mem0", f"{ENGINES_PYTHON} -m arms.mem0", **env, **telemetry)
        .arm("graphiti", f"{ENGINES_PYTHON} -m arms.graphiti", **env, **telemetry)
        .set(deadline_ms=120000)  # no [limits]: the defaults
        .write(tmp_path / "study")
    )
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    run_dir = only_run(runs)
    study_header = header(run_dir)["study"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    items = read_jsonl(ITEMS)
    turns = sum(len(item["turns"]) for item in items)
    assert study_header["outcomes"] == {"done": 2 * turns}, study_header["outcomes"]
    assert study_header["memory_miss"] == {"graphiti": 0, "mem0": 0}
    defaults = ResourceLimits()
    for arm in ("mem0", "graphiti"):
        held = study_header["arm_limits"][arm]
        assert held["memory"] == defaults.memory, held  # bounded, by the cgroup
        assert held["how"].startswith("a cgroup's memory"), held
        assert not any(x.startswith("memory") for x in held["not_enforced"])
