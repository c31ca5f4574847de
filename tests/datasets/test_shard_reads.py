"""A shard of a LongMemEval study reads only the questions it runs (harness/datasets/head.py,
longmemeval.py): a question broken in another shard's part of the file does not stop it, and
stops the shard that runs it, in one line naming the field, the run ended as failed. (That
shards merge into one run is tests/e2e/test_merge.py's.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.study import load_study
from rundir.runs.shards import shard_items
from tests.datasets.fixtures import longmemeval_file
from tests.helpers.studies import harness, header, only_run
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

MEMORY_ARM = TOY_ARMS / "memory_arm.py"


def test_a_question_broken_outside_a_shard_fails_only_the_shard_that_runs_it(
    tmp_path: Path,
) -> None:
    path = longmemeval_file(tmp_path, per_type=1)
    arm = {"command": f"{sys.executable} {MEMORY_ARM}", "env": {}}
    items = {"format": "longmemeval", "path": path.name}
    study = StudyBuilder(arms={"toy": arm}).set(items=items).write(tmp_path)
    ids = [item.id for item in load_study(study).items]
    [broken] = shard_items(ids, 2, 2)[:1]
    entries = json.loads(path.read_text())
    at = next(n for n, e in enumerate(entries) if e["question_id"] == broken)
    entries[at]["haystack_sessions"][0][0]["role"] = "robot"
    path.write_text(json.dumps(entries, indent=1))
    runs = tmp_path / "runs"

    first = harness("record", str(study), "--run-dir", str(runs / "1"), "--shard", "1/2")
    assert first.returncode == 0, first.stdout + first.stderr[-3000:]
    assert f"shard 1/2 (flag): {len(shard_items(ids, 1, 2))} item(s)" in first.stdout

    second = harness("record", str(study), "--run-dir", str(runs / "2"), "--shard", "2/2")
    assert second.returncode == 2, second.stdout + second.stderr[-3000:]
    [said] = [line for line in second.stderr.splitlines() if line.startswith("harness: error:")]
    assert f"[{at}].haystack_sessions[0][0].role: 'robot' is not user or assistant" in said
    assert "Traceback" not in second.stderr
    # The stopped run ended failed, saying why: not left `running` for `harness runs` and the
    # report to show as still going.
    study_run = header(only_run(runs / "2"))["study"]
    assert study_run["passed"] is False and study_run["stopped"] in said
    listed = harness("runs", str(runs / "2"))
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "failed" in listed.stdout and "running" not in listed.stdout
