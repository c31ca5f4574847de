"""The options and arguments several commands share, made once so they read the same everywhere:
one flag name, one environment variable, one help text (`harness record --help` and `harness
check --help` cannot drift apart), and `isolation_choice`, the one check of `--isolation`.

Loads only typer: every command module imports this, and `harness --help` imports none of them
(harness/cli/lazy.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.isolation import Isolation

STUDY_FILE = typer.Argument(..., help="The study file (study.toml).")
RUN_DIR = typer.Option(Path("runs"), "--run-dir", envvar="HARNESS_RUN_DIR", help="Run root.")
ARM = typer.Option(
    [], "--arm", envvar="HARNESS_ARMS", help="Run only this arm (repeatable; default: all)."
)
LIMIT = typer.Option(None, "--limit", envvar="HARNESS_LIMIT", help="Run only the first N items.")
ISOLATION = typer.Option(
    "auto",
    "--isolation",
    envvar="HARNESS_ISOLATION",
    help="auto | docker | local. auto: docker when an engine answers, the harness runs as root "
    "with iptables, the study's images are built and every arm runs inside the study folder; "
    "else local, and the run says why.",
)
RESUME = typer.Option(
    None,
    "--resume",
    envvar="HARNESS_RESUME",
    help="A stopped run's directory: run, as a new run, only the (item, arm) pairs it (and the "
    "runs it resumed) did not finish. The study must be unchanged.",
)
SHARD = typer.Option(
    None,
    "--shard",
    envvar="HARNESS_SHARD",
    help="Run only shard I of N of the items (1-based, e.g. 2/3), as its own run with the "
    "study's hashes; `auto` reads a Slurm array's or a Kubernetes Indexed Job's index "
    "(HARNESS_SHARD_COUNT gives the Job's count). Join the shards with `harness merge`.",
)
WORKERS = typer.Option(
    None,
    "--workers",
    envvar="HARNESS_WORKERS",
    help="Run items in parallel on N independent sets of arms (local backend; default: the "
    "study's `workers`, else 1). Results do not depend on N.",
)
ALLOW_MISSES = typer.Option(
    False,
    "--allow-misses",
    envvar="HARNESS_ALLOW_MISSES",
    help="Pass the run although an arm missed a memory control (the misses are still counted).",
)
SKIP_SUITE = typer.Option(
    False,
    "--skip-suite",
    envvar="HARNESS_SKIP_SUITE",
    help="Live: run without a record of the integration suite passing on this code (V0; "
    "run.json and the report say so, as a deviation).",
)
NEW_LEDGER_BRANCH = typer.Option(
    False,
    "--new-ledger-branch",
    help="Live: start the study's ledger_branch although the ledger already holds entries "
    "(without it a missing branch is refused: deleted or mistyped, docs/ledger-branch.md).",
)


def isolation_choice(value: str) -> Isolation:
    """`--isolation`'s value, refused in one line unless it is one the backends know."""
    if value not in ("auto", "docker", "local"):
        raise HarnessError(
            f"--isolation {value!r} is not one of auto, docker, local",
            hint="auto (docker when its engine answers, else local), docker or local",
        )
    return cast("Isolation", value)
