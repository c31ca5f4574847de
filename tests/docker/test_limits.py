"""Bounded arms on the docker backend: a fork bomb, a memory balloon and a disk filler each stop
at the study's bound, are named `resource_limit` in turns.jsonl with the arm and the bound, the
arm is replaced by a fresh one for its next item, the other arm's turns are untouched, every arm
ran under the same bounds (run.json, read back from the engine), and the host is unharmed.

One run holds the three abusers and a calm arm (one engine start for all four tests).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.checks.audit.run import audit_run
from tests.helpers.studies import read_jsonl, write_study

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
ARM = Path(__file__).with_name("abuse_arm.py")
MIB = 2**20
LIMITS = {"pids": 64, "memory": "192m", "cpus": 1.0, "disk": "48m"}
ABUSE = {"bomber": "forkbomb", "balloon": "balloon", "filler": "fill"}


@pytest.fixture(scope="module")
def run(docker_engine: docker.DockerClient, images: None, tmp_path_factory: Any) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("limits")
    (folder / "study").mkdir()
    shutil.copy(ARM, folder / "study" / ARM.name)  # containers see the study folder only
    arms = {
        name: {"command": f"python {ARM.name}", "env": {"ABUSE": a}} for name, a in ABUSE.items()
    }
    arms["calm"] = {"command": f"python {ARM.name}"}
    items = [
        {"id": "abuse", "clock": "2024-05-01T10:00:00",
         "turns": [{"user": "abuse"}, {"user": "echo second"}]},
        {"id": "after", "clock": "2024-05-02T10:00:00", "turns": [{"user": "echo again"}]},
    ]  # fmt: skip
    study = write_study(folder / "study", arms, items, deadline_ms=15000, limits=LIMITS)
    runs = folder / "runs"
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "record", str(study), "--isolation", "docker",
         "--run-dir", str(runs)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    turns = read_jsonl(run_dir / "turns.jsonl")
    return {
        "done": done,
        "dir": run_dir,
        "header": json.loads((run_dir / "run.json").read_text()),
        "turns": {(t["arm"], t["item"], t["turn"]): t for t in turns},
    }


def test_each_abuse_is_named_as_its_arm_and_bound(run: dict[str, Any]) -> None:
    turns = run["turns"]
    for arm, bound in [("bomber", "pids limit (64)"), ("balloon", "memory limit (192 MiB)"),
                       ("filler", "disk limit (48 MiB)")]:  # fmt: skip
        first, second = turns[(arm, "abuse", 0)], turns[(arm, "abuse", 1)]
        assert first["outcome"] == "resource_limit", (arm, first)
        assert f"arm {arm!r} hit its {bound}" in first["error"], first["error"]
        # The item's later turn is not run on a session whose state is gone.
        assert second["outcome"] == "resource_limit", second
        assert second["error"].startswith("not run: "), second
        # A fresh arm answers the next item: the bound took this arm's turn, not the arm.
        assert turns[(arm, "after", 0)]["outcome"] == "done", turns[(arm, "after", 0)]
    assert turns[("bomber", "abuse", 0)]["text"] == "bombed"  # its answer so far is kept
    filled = turns[("filler", "abuse", 0)]["text"]
    assert "then ENOSPC; the root: EROFS" in filled, filled
    assert int(filled.split()[1]) <= 48, filled


def test_the_calm_arm_is_untouched(run: dict[str, Any]) -> None:
    turns = run["turns"]
    assert [
        turns[("calm", i, t)]["outcome"] for i, t in [("abuse", 0), ("abuse", 1), ("after", 0)]
    ] == ["done"] * 3
    assert [
        turns[("calm", i, t)]["text"] for i, t in [("abuse", 0), ("abuse", 1), ("after", 0)]
    ] == ["calm", "second", "again"]
    assert all(turns[("calm", i, t)]["attempts"] == 1 for i, t in [("abuse", 0), ("after", 0)])
    outcomes = run["header"]["study"]["outcomes"]
    assert outcomes.get("resource_limit") == 6 and outcomes.get("done") == 6, outcomes
    assert not outcomes.get("infra_failed"), outcomes


def test_every_arm_ran_under_the_same_bounds_read_back_from_the_engine(run: dict[str, Any]) -> None:
    study = run["header"]["study"]
    assert study["limits"] == {"pids": 64, "memory": 192 * MIB, "cpus": 1.0, "disk": 48 * MIB}
    applied = study["arm_limits"]
    assert set(applied) == {*ABUSE, "calm"}
    first = applied["calm"]
    assert all(limits == first for limits in applied.values()), applied
    assert (first["pids"], first["memory"], first["memory_swap"]) == (64, 192 * MIB, 192 * MIB)
    assert (first["cpus"], first["disk"], first["read_only_root"]) == (1.0, 48 * MIB, True)
    # The audit checks the same from run.json: no arm held other bounds than the study's.
    record = audit_run(run["dir"])
    assert [d for d in record.discrepancies if d.check == "limits"] == []


def test_the_host_is_unharmed_and_nothing_is_left(run: dict[str, Any]) -> None:
    run_dir: Path = run["dir"]
    assert subprocess.run(["true"], check=False).returncode == 0  # the host still forks
    mounts = Path("/proc/mounts").read_text()
    assert str(run_dir) not in mounts  # every disk and bind mount undone
    assert not (run_dir / ".disk").exists()  # the images deleted
    # The arms' files are plain files in the run: the filler's log is there, its /tmp is not.
    assert (run_dir / "logs" / "filler" / "arm.log").is_file()
    label = f"harness.run={run_dir.name}"
    containers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={label}"], capture_output=True, text=True
    ).stdout
    assert containers.strip() == ""  # the bomb's container and its processes are gone
    summary = run["done"].stdout
    assert "resource_limit" in summary or "resource limit" in summary, summary[-3000:]
