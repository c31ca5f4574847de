"""`harness gate STUDY` and `harness audit RUN_DIR`: the checks that make a run's numbers
believable (harness/run/gate.py, harness/checks/audit/run.py). Exit 0 when the check passes, 1 when
it finds a difference, 2 on a usage error."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.options import ALLOW_MISSES, ISOLATION, RUN_DIR, STUDY_FILE, isolation_choice

SHOWN = 10  # divergences or discrepancies printed; the JSON record has them all


def gate(
    study: Path = STUDY_FILE,
    run_dir: Path = RUN_DIR,
    isolation: str = ISOLATION,
    allow_misses: bool = ALLOW_MISSES,
) -> int:
    """Run the study twice in record mode and check both runs sent the same requests."""
    # Imported here: loading a study and the orchestrator costs seconds other commands skip.
    from harness.checks import diff_block
    from harness.run import run_gate
    from harness.study import load_study

    record, path = run_gate(load_study(study), run_dir, isolation_choice(isolation), allow_misses)
    counts = record.counts
    typer.echo(f"gate {record.gate_id}: {'PASSED' if record.passed else 'FAILED'}")
    typer.echo(
        f"  runs: {', '.join(run.run_id for run in record.runs)}; turns {counts.turns}, calls "
        f"compared {counts.calls_compared}, matching {counts.calls_matching}, reordered turns "
        f"{counts.reordered_turns}"
    )
    typer.echo(f"  masked: {', '.join(record.masks)} (headers are never compared)")
    for why in record.why:
        typer.echo(f"  {why}")
    for d in record.divergences[:SHOWN]:
        either = d.first or d.second
        route = f" ({either.route})" if either else ""
        typer.echo(f"  arm {d.arm} item {d.item} turn {d.turn} call {d.index}{route}: {d.kind}")
        for line in d.diff.splitlines()[:5]:
            typer.echo(f"    {line}")
        for line in diff_block(d.body_diff):
            typer.echo(line)
    if len(record.divergences) > SHOWN:
        typer.echo(f"  ... and {len(record.divergences) - SHOWN} more divergence(s) in gate.json")
    if record.divergences:
        typer.echo(
            "  hint: a path that legitimately varies (a time, a random id) goes in the study's "
            'mask list, e.g. mask = ["' + (record.divergences[0].paths or ["path"])[0] + '"]'
        )
    for pair in record.pairs:
        verdict = "passed" if pair.passed else "FAILED"
        typer.echo(
            f"  cross-arm pair {pair.leader} -> {pair.follower} ({pair.differ_by}): {verdict}, "
            f"{pair.checked} firing(s) checked"
        )
        for failure in pair.failures[:SHOWN]:
            typer.echo(f"    {failure}")
        if not pair.passed:
            typer.echo(
                f"    {pair.follower} is dropped from live runs before any spend; "
                f"{pair.leader} is the candidate"
            )
    typer.echo(f"  {path}")
    return 0 if record.passed else 1


def audit(
    run: Path = typer.Argument(..., help="The run directory (runs/<run-id>)."),
    prices: Path | None = typer.Option(
        None, help="The price table to re-price with (default: the one the run names)."
    ),
    ledger: str | None = typer.Option(
        None,
        help="The ledger the run was charged to, a file or a postgresql:// URL (default: the "
        "one the run names).",
    ),
    judgments: list[Path] = typer.Option(
        [],
        "--judgments",
        help="A judgment set to re-check with the run (repeatable); sets beside the run that "
        "judge it are re-checked anyway.",
    ),
) -> int:
    """Recompute every cost and hash of a run and check them against its ledger.

    Also re-checks the judgment sets that judge it (every vote traced to a prompt and a reply),
    the served models against the study's pins, the frozen protocol's hashes and, in a coupled
    study, every turn context handed between arms against its hashes."""
    from harness.checks.audit import AUDIT_FILE, audit_run
    from ledger.ledger import as_location

    record = audit_run(run, prices, as_location(ledger) if ledger else None, list(judgments))
    counts, totals = record.counts, record.totals
    typer.echo(f"audit {record.run_id}: {'PASSED' if record.passed else 'FAILED'}")
    typer.echo(
        f"  {counts.calls} calls re-priced to ${totals.repriced_usd} (logged "
        f"${totals.call_log_usd}, ledger "
        f"{'-' if totals.ledger_usd is None else '$' + str(totals.ledger_usd)}); "
        f"{counts.bodies_checked} bodies, {counts.files_checked} files checked"
    )
    for d in record.discrepancies[:SHOWN]:
        typer.echo(f"  {d.check}: {d.where}: {d.detail}")
    if len(record.discrepancies) > SHOWN:
        typer.echo(f"  ... and {len(record.discrepancies) - SHOWN} more")
    for note in record.notes:
        typer.echo(f"  note: {note}")
    typer.echo(f"  {run / AUDIT_FILE}")
    return 0 if record.passed else 1
