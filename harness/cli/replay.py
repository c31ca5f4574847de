"""`harness replay RUN_DIR`: re-run a recorded study offline, answered from its own call log.

The study is re-run as it was (same arms, same items, same seeded order) with the proxy in replay
mode: every call is answered from RUN_DIR's recorded responses, a call it did not record fails
loudly, and nothing reaches a vendor, so no key is needed. The replay writes its own run
directory with `replay.json`, the comparison with the original (harness/checks/replay_compare.py).
"""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.options import ISOLATION, WORKERS, isolation_choice
from harness.errors import HarnessError


def replay(
    source: Path = typer.Argument(..., help="The run directory to replay (it has run.json)."),
    run_dir: Path | None = typer.Option(
        None,
        "--run-dir",
        envvar="HARNESS_RUN_DIR",
        help="Run root for the replay's own run directory (default: RUN_DIR's parent).",
    ),
    study: Path | None = typer.Option(
        None, "--study", help="The study file, if it moved (it must hash the same)."
    ),
    isolation: str = ISOLATION,
    workers: int | None = WORKERS,
) -> int:
    """Replay a recorded run with no key and no network; exit 1 on any divergence or miss."""
    # Imported here: loading a study pulls in the vendor SDKs, which other commands need not pay.
    from harness.checks import all_masks, compare_replay, verdict_lines, write_comparison
    from harness.run import RunRequest, run_study
    from harness.study import load_study
    from rundir.runs import read_header

    header = read_header(source)
    recorded = header.study
    if recorded is None:
        raise HarnessError(
            f"{source} is not a study run (it was written by `harness proxy serve`)",
            hint="replay a run of `harness record` or `harness live`",
        )
    if not (source / "calls.jsonl").is_file():
        raise HarnessError(f"{source} has no calls.jsonl: there is nothing to replay from")
    loaded = load_study(study or Path(recorded.study_path))
    changed = [
        name
        for name, then, now in (
            ("study file", recorded.study_sha256, loaded.study_sha256),
            ("items file", recorded.items_sha256, loaded.items_sha256),
            ("compose file", recorded.compose_sha256, loaded.compose_sha256),
        )
        if then != now
    ]
    if changed:
        # Another script cannot reproduce the recording: its misses would say nothing.
        raise HarnessError(
            f"the {' and the '.join(changed)} of {loaded.path} changed since run "
            f"{header.run_id} was recorded (SHA-256 differs)",
            hint="restore the files the run was recorded with (run.json keeps their hashes)",
        )
    unknown = [arm for arm in recorded.arms if arm not in loaded.arms]
    if unknown:
        raise HarnessError(f"the study no longer has arm(s) {', '.join(unknown)}")
    request = RunRequest(
        study=loaded,
        mode="replay",
        run_root=run_dir or source.resolve().parent,
        arms=recorded.arms,
        limit=recorded.items if 0 < recorded.items < len(loaded.items) else None,
        isolation=isolation_choice(isolation),
        replay_from=source.resolve(),
        allow_misses=recorded.allow_misses,  # judged as the recording was
        workers=workers,
    )
    result = run_study(request)
    comparison = compare_replay(source, result.run_dir, all_masks(loaded))  # the proxy's masks
    write_comparison(result.run_dir / "replay.json", comparison)
    typer.echo(f"replay of {header.run_id} -> {result.header.run_id}")
    for line in verdict_lines(comparison):
        typer.echo(line)
    typer.echo(f"  {result.run_dir / 'replay.json'}")
    if not result.passed:
        typer.echo("  the replay run itself did not pass (see its run.json)")
    return 0 if comparison.clean and result.passed else 1
