"""Write throwaway studies and run the real `harness` CLI on them as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

REPO = Path(__file__).resolve().parents[2]
TOY_ARM = TOY_ARMS / "study_arm.py"
RUN_TIMEOUT = 240


def toy_arm(**env: str) -> dict[str, Any]:
    return {"command": f"python {TOY_ARM}", "env": env}


def write_study(
    folder: Path, arms: dict[str, dict[str, Any]], items: list[dict[str, Any]], **fields: Any
) -> Path:
    """A study of `arms` (each {"command", "env"}) over `items`; `fields` are study.toml's."""
    tables = {
        name: {"command": spec["command"], "env": spec.get("env", {})}
        for name, spec in arms.items()
    }
    return StudyBuilder(items=items, arms=tables, fields=fields).write(folder)


def spawn_harness(*args: str) -> subprocess.Popen[str]:
    """The `harness` CLI started in the background (a test then signals or waits for it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "--log-json", *args],
        cwd=REPO,
        env={**os.environ, "HARNESS_NO_PROGRESS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def harness(
    *args: str, env: Mapping[str, str | None] | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """The `harness` CLI run to its end: the one helper every test that runs it uses.

    `env` is laid over this process's environment; a None value unsets that variable (a test of
    a default must not inherit the developer's own, e.g. HARNESS_LEDGER)."""
    merged = {**os.environ, "HARNESS_NO_PROGRESS": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-json", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={key: value for key, value in merged.items() if value is not None},
        timeout=RUN_TIMEOUT,
    )


def only_run(run_root: Path) -> Path:
    runs = [p for p in run_root.iterdir() if (p / "run.json").exists()]
    assert len(runs) == 1, runs
    return runs[0]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def header(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "run.json").read_text()))


def gate_then_live(study: Path, runs: Path, env: dict[str, str], cap: str = "1") -> Path:
    """`harness gate` then `harness live --cap` on the local backend (live needs the gate);
    both must pass. Returns the live run's directory."""
    for command in (["gate", str(study)], ["live", str(study), "--cap", cap]):
        done = harness(*command, "--run-dir", str(runs), "--isolation", "local", env=env)
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    made = [p for p in runs.iterdir() if (p / "run.json").exists()]
    (live,) = [p for p in made if header(p)["mode"] == "live"]
    return live
