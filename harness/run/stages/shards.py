"""Which shard this process runs: `--shard I/N`, or `--shard auto` read from the cluster engine.

Indexes are 1-based, as `--shard 1/3` reads (the split itself is rundir/runs/shards.py). `--shard
auto` takes the index from the variables each engine sets on its tasks:
- Slurm job arrays: with HARNESS_SHARD_COUNT set (the array's declared size, as
  examples/cluster/slurm-array.sbatch sets it next to its `--array=0-(N-1)`), SLURM_ARRAY_TASK_ID
  is the 0-based shard index out of that count, so resubmitting one task (`sbatch --array=1`,
  where Slurm says the array has one task, from 1 to 1) runs that task's shard and no other;
  without it, SLURM_ARRAY_TASK_ID relative to SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP
  (so `--array=0-2` and `--array=1-3` both give shards 1..3), out of SLURM_ARRAY_TASK_COUNT;
- Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX (0-based); the Job does not tell its pods how
  many completions it has, so the manifest sets HARNESS_SHARD_COUNT to its `completions`;
- a CI matrix sets HARNESS_SHARD=I/N itself (the flag's environment variable), e.g. in GitHub
  Actions `HARNESS_SHARD: ${{ matrix.shard }}/3` with `matrix.shard: [1, 2, 3]`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from harness.errors import HarnessError

SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class ShardSpec:
    index: int  # 1..count
    count: int
    source: str  # "flag", "slurm" or "kubernetes"

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def resolve_shard(flag: str | None, env: Mapping[str, str] | None = None) -> ShardSpec | None:
    """The shard asked for, or None (the whole study); HarnessError naming what is wrong."""
    if flag is None or not flag.strip():
        return None
    env = os.environ if env is None else env
    if flag.strip() == "auto":
        return _from_engine(env)
    match = SHARD_RE.match(flag)
    if match is None:
        raise HarnessError(
            f"--shard {flag!r} is not I/N or auto", hint="e.g. --shard 2/3 (1-based), or auto"
        )
    return _checked(int(match.group(1)), int(match.group(2)), "flag", f"--shard {flag}")


def _checked(index: int, count: int, source: str, what: str) -> ShardSpec:
    if count < 1 or not 1 <= index <= count:
        raise HarnessError(
            f"{what}: shard {index} of {count} does not exist",
            hint=f"shards are numbered 1..N (1-based), N >= 1; got index {index}, N {count}",
        )
    return ShardSpec(index, count, source)


def _int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    text = env.get(name)
    if text is None or not text.strip():
        if default is not None:
            return default
        raise HarnessError(f"--shard auto: {name} is not set", hint=_HINT)
    try:
        return int(text)
    except ValueError:
        raise HarnessError(f"--shard auto: {name}={text!r} is not a number", hint=_HINT) from None


_HINT = (
    "--shard auto reads Slurm arrays (SLURM_ARRAY_TASK_ID, 0-based, with HARNESS_SHARD_COUNT "
    "set to the array's size; or SLURM_ARRAY_TASK_COUNT) or "
    "Kubernetes Indexed Jobs (JOB_COMPLETION_INDEX, with HARNESS_SHARD_COUNT set to the Job's "
    "completions); elsewhere give --shard I/N or HARNESS_SHARD=I/N"
)


def _from_engine(env: Mapping[str, str]) -> ShardSpec:
    if env.get("SLURM_ARRAY_TASK_ID") and env.get("HARNESS_SHARD_COUNT", "").strip():
        # The declared count: a resubmitted task's own array is smaller than the study's.
        task = _int(env, "SLURM_ARRAY_TASK_ID")
        count = _int(env, "HARNESS_SHARD_COUNT")
        what = f"Slurm array task {task} (0-based) of HARNESS_SHARD_COUNT={count}"
        return _checked(task + 1, count, "slurm", what)
    if env.get("SLURM_ARRAY_TASK_ID"):
        task = _int(env, "SLURM_ARRAY_TASK_ID")
        first = _int(env, "SLURM_ARRAY_TASK_MIN", 0)
        step = _int(env, "SLURM_ARRAY_TASK_STEP", 1)
        count = _int(env, "SLURM_ARRAY_TASK_COUNT")
        if step < 1 or (task - first) % step:
            raise HarnessError(
                f"--shard auto: Slurm array task {task} is not on its array's grid "
                f"(min {first}, step {step})",
                hint="submit the array as --array=0-(N-1) or 1-N",
            )
        what = f"Slurm array task {task} (min {first}, step {step}, count {count})"
        return _checked((task - first) // step + 1, count, "slurm", what)
    if env.get("JOB_COMPLETION_INDEX"):
        index = _int(env, "JOB_COMPLETION_INDEX")
        count = _int(env, "HARNESS_SHARD_COUNT")
        what = f"Kubernetes completion index {index} of {count}"
        return _checked(index + 1, count, "kubernetes", what)
    raise HarnessError("--shard auto found no shard index in the environment", hint=_HINT)
