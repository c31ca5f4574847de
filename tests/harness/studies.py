"""Write throwaway studies and run the real `harness` CLI on them as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOY_ARM = Path(__file__).with_name("study_arm.py")
RUN_TIMEOUT = 240


def toy_arm(**env: str) -> dict[str, Any]:
    return {"command": f"python {TOY_ARM}", "env": env}


def write_study(
    folder: Path, arms: dict[str, dict[str, Any]], items: list[dict[str, Any]], **fields: Any
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    lines = ['name = "test"', 'items = "items.jsonl"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in fields.items()]
    for name, spec in arms.items():
        lines.append(f"[arms.{name}]")
        lines.append(f"command = {json.dumps(spec['command'])}")
        env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.get("env", {}).items())
        lines.append(f"env = {{ {env} }}")
    study = folder / "study.toml"
    study.write_text("\n".join(lines) + "\n")
    return study


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


def harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-json", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "HARNESS_NO_PROGRESS": "1", **(env or {})},
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
