"""`--shard I/N` and `--shard auto`: the index each cluster engine gives its tasks, read as the
engine sets it (Slurm arrays of any start and step, Kubernetes Indexed Jobs with the count the
manifest passes, a CI matrix's HARNESS_SHARD), and a wrong or missing one refused in one line."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.run.stages.shards import ShardSpec, resolve_shard

TASK = "SLURM_ARRAY_TASK_ID"


def test_no_flag_is_the_whole_study() -> None:
    assert resolve_shard(None, {}) is None and resolve_shard("", {}) is None


@pytest.mark.parametrize(("text", "label"), [("1/3", "1/3"), ("3/3", "3/3"), (" 2 / 5 ", "2/5")])
def test_an_explicit_shard_is_1_based(text: str, label: str) -> None:
    spec = resolve_shard(text, {})
    assert spec is not None and spec.label == label and spec.source == "flag"


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "2", "-1/3", "1/3/3"])
def test_a_wrong_shard_is_refused(text: str) -> None:
    with pytest.raises(HarnessError, match="shard"):
        resolve_shard(text, {})


@pytest.mark.parametrize(
    ("env", "index"),
    [
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0"}, 1),  # --array=0-2
        ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0"}, 3),
        ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1"}, 1),  # --array=1-3
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1"}, 3),
        (  # --array=10-14:2
            {TASK: "14", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2"},
            3,
        ),
    ],
)
def test_auto_reads_a_slurm_array_task(env: dict[str, str], index: int) -> None:
    spec = resolve_shard("auto", {**env, "SLURM_ARRAY_TASK_COUNT": "3"})
    assert spec == ShardSpec(index, 3, "slurm")


def test_a_resubmitted_slurm_task_runs_its_shard_of_the_declared_count() -> None:
    # `sbatch --array=1` of a script declaring --array=0-2: Slurm tells the task its array is
    # one task, 1 to 1; the declared count keeps it shard 2 of 3, not shard 1 of 1 (every item).
    resubmit = {TASK: "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "1"}
    resubmit["SLURM_ARRAY_TASK_COUNT"] = "1"
    assert resolve_shard("auto", resubmit) == ShardSpec(1, 1, "slurm")  # the count it is told
    declared = {**resubmit, "HARNESS_SHARD_COUNT": "3"}
    assert resolve_shard("auto", declared) == ShardSpec(2, 3, "slurm")
    with pytest.raises(HarnessError, match="shard 4 of 3 does not exist"):
        resolve_shard("auto", {**declared, TASK: "3"})  # a 1-based --array=1-3 is refused


def test_auto_reads_a_kubernetes_indexed_job_with_its_count() -> None:
    env = {"JOB_COMPLETION_INDEX": "0", "HARNESS_SHARD_COUNT": "3"}
    assert resolve_shard("auto", env) == ShardSpec(1, 3, "kubernetes")
    assert resolve_shard("auto", {**env, "JOB_COMPLETION_INDEX": "2"}) == ShardSpec(
        3, 3, "kubernetes"
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({}, "no shard index"),
        ({"JOB_COMPLETION_INDEX": "0"}, "HARNESS_SHARD_COUNT is not set"),
        ({"JOB_COMPLETION_INDEX": "3", "HARNESS_SHARD_COUNT": "3"}, "does not exist"),
        ({"SLURM_ARRAY_TASK_ID": "1"}, "SLURM_ARRAY_TASK_COUNT is not set"),
        ({"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "3"}, "not a number"),
        (
            {TASK: "3", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "3"},
            "grid",
        ),
    ],
)
def test_auto_without_a_usable_index_is_refused(env: dict[str, str], says: str) -> None:
    with pytest.raises(HarnessError, match=says):
        resolve_shard("auto", env)
