"""`harness void RUN_DIR --items ID... --reason TEXT`: set items aside in every arm of a run after a
harness defect was found in them (rundir/runs/voids.py). The run's files are not touched: one dated
record is appended to voids.jsonl, chained to the run's manifest, whose void count and head move
with it in run.json; the report leaves the items out of every statistic."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.errors import HarnessError


def void(
    run: Path = typer.Argument(..., help="The run directory (runs/<run-id>)."),
    items: list[str] = typer.Option(..., "--items", help="An item id to void (repeatable)."),
    reason: str = typer.Option(..., "--reason", help="The defect found, in one line."),
) -> int:
    """Void items of a run in every arm (a harness defect found after it), with a dated reason."""
    from rundir.runs import (
        VoidRecord,
        append_void,
        chain_next,
        now_iso,
        read_header,
        voided_items,
        write_header,
    )
    from rundir.turns import read_turns

    header = read_header(run)
    if header.study is None:
        raise HarnessError(f"{run} is not a study run", hint="void items of a `harness record` "
                           "or `harness live` run")  # fmt: skip
    reason = " ".join(reason.split())
    if not reason:
        raise HarnessError("--reason is empty", hint="say which defect voids these items")
    # One `--items a b` and repeated `--items a --items b` both work.
    wanted = list(dict.fromkeys(i for given in items for i in given.replace(",", " ").split()))
    ran = {t.item for t in read_turns(run / "turns.jsonl")}
    unknown = [i for i in wanted if i not in ran]
    if unknown or not wanted:
        raise HarnessError(
            f"item(s) {', '.join(unknown) or '(none given)'} did not run in {header.run_id}",
            hint=f"give item ids of its turns.jsonl ({', '.join(sorted(ran)[:5])}...)",
        )
    already = voided_items(run)
    again = [i for i in wanted if i in already]
    if again:
        raise HarnessError(
            f"item(s) {', '.join(again)} of {header.run_id} are already voided "
            f"({already[again[0]]})"
        )
    manifest = header.manifest
    if manifest is None:
        raise HarnessError(
            f"{run} has no manifest in run.json: the run never finished",
            hint="void items of a finished run (its voids are chained to its manifest)",
        )
    record = VoidRecord(
        run_id=header.run_id,
        voided=now_iso(),
        items=wanted,
        reason=reason,
        prev=chain_next(run, manifest),
    )
    # The line first, then run.json: a crash between leaves a mismatch the audit names.
    manifest.voids_head = append_void(run, record)
    manifest.voids += 1
    write_header(run, header)
    typer.echo(f"voided {len(wanted)} item(s) of {header.run_id} in every arm: {', '.join(wanted)}")
    typer.echo(f"  reason: {reason}")
    typer.echo(
        "  the report leaves them out of every statistic; after the fix, rerun them with "
        f"`harness {header.mode} STUDY --resume {run}` and give both run directories to "
        "`harness report`: it shows the difference"
    )
    return 0
