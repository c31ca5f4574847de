"""`harness ledger ...` and `harness prices ...`: read and maintain the spend ledger by hand."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import typer

from harness.cli.lazy import typer_app
from harness.errors import HarnessError
from ledger.errors import LedgerError
from ledger.git_branch import DEFAULT_BRANCH, LedgerBranch, ledger_bytes, verify_branch
from ledger.ledger import Ledger, Location, as_location, entry_lines, exists, verify, where
from ledger.prices import ModelPrice, load_prices
from ledger.reconcile import group_by_runs, read_usage_export
from ledger.state import LedgerState
from rundir.atomic import write_atomic

ledger_app = typer_app(help="The durable spend ledger: show, verify, export, settle, reconcile.")
prices_app = typer_app(help="Price tables.")

LEDGER_OPTION = typer.Option(
    "ledger.jsonl",
    "--ledger",
    envvar=["HARNESS_LEDGER_URL", "HARNESS_LEDGER"],
    help="Ledger file or postgresql:// URL (default: ledger.jsonl here, or $HARNESS_LEDGER_URL, "
    "or $HARNESS_LEDGER).",
)
PRICES_OPTION = typer.Option(
    None, "--prices", help="A price table TOML file (default: the packaged one)."
)


@contextmanager
def _open(text: str, must_exist: bool = True) -> Iterator[Ledger]:
    path = as_location(text)
    if must_exist and not exists(path):
        raise HarnessError(
            f"no ledger at {path}", hint="pass --ledger FILE|URL or set HARNESS_LEDGER(_URL)"
        )
    try:
        ledger = Ledger(path)
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    for warning in ledger.warnings:
        typer.echo(f"warning: {warning}", err=True)
    try:
        yield ledger
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    finally:
        ledger.close()


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _money(value: Decimal | None) -> str:
    return "-" if value is None else f"${value:.6f}"


def render_state(state: LedgerState) -> str:
    if not state.stages:
        return "(empty ledger: open a stage with `harness ledger open-stage NAME --cap USD`)"
    stages = [["stage", "cap", "spend (x1.5 unreconciled)", "open reservations", "left", "refused"]]
    for name, st in sorted(state.stages.items()):
        spend, reserved = state.stage_spend(name), state.stage_reserved(name)
        stages.append(
            [
                name,
                _money(st.cap_usd),
                _money(spend),
                _money(reserved),
                _money(st.cap_usd - spend - reserved),
                str(st.refused),
            ]
        )
    runs = [["run", "stage", "state", "cap", "calls", "computed", "vendor", "counts as", "basis"]]
    for run in state.runs.values():
        runs.append(
            [
                run.run_id,
                run.stage,
                run.state,
                _money(run.cap_usd),
                f"{run.calls}" + (f" ({run.flagged_calls} flagged)" if run.flagged_calls else ""),
                _money(run.computed_usd),
                _money(run.vendor_usd),
                _money(run.charge_usd),
                run.basis or "-",
            ]
        )
    out = _table(stages)
    if len(runs) > 1:
        out += "\n\n" + _table(runs)
    return out + f"\n\n{state.entries} entries, head {state.head[:16]}"


@ledger_app.command("show")
def show(ledger: str = LEDGER_OPTION) -> None:
    """Stages, caps, spend, open reservations, and every run with its state."""
    with _open(ledger) as led:
        typer.echo(render_state(led.state()))


GIT_REPO_OPTION = typer.Option(
    None,
    "--git-repo",
    envvar="HARNESS_LEDGER_GIT",
    help="Also check the ledger's private branch in this git repository (a study's "
    "ledger_repo; default: $HARNESS_LEDGER_GIT).",
)
GIT_BRANCH_OPTION = typer.Option(
    None,
    "--git-branch",
    envvar="HARNESS_LEDGER_BRANCH",
    help="The branch (default: harness-ledger, or $HARNESS_LEDGER_BRANCH).",
)


@ledger_app.command("verify")
def verify_command(
    ledger: str = LEDGER_OPTION,
    git_repo: Path | None = GIT_REPO_OPTION,
    git_branch: str | None = GIT_BRANCH_OPTION,
) -> None:
    """Check every hash link and seq; exit 1 on a broken chain, naming the line (the entry's
    seq, in a PostgreSQL ledger). With --git-repo, also that every commit of the ledger's
    branch only appended to the file and that the branch's head holds the ledger, naming the
    first commit that rewrote a line."""
    location: Location = as_location(ledger)
    if not exists(location):
        raise HarnessError(f"no ledger at {where(location)}", hint="pass --ledger FILE|URL")
    name = where(location)
    try:
        report = verify(location)
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    for line, problem in report.problems:
        typer.echo(f"{name}:{line}: {problem}", err=True)
    if report.torn_tail:
        typer.echo(f"warning: {name}: {report.torn_tail}", err=True)
    if not report.ok:
        typer.echo(f"{name}: chain BROKEN ({len(report.problems)} problems)", err=True)
        # SystemExit, not typer.Exit: cli.run() calls the app with standalone_mode=False, which
        # turns typer.Exit into a return value and would drop the exit status.
        raise SystemExit(1)
    typer.echo(f"{name}: ok, {report.entries} entries, head {report.head}")
    if git_repo is not None:
        _verify_branch(location, LedgerBranch(git_repo, git_branch or DEFAULT_BRANCH))


def _verify_branch(location: Location, branch: LedgerBranch) -> None:
    try:
        found = verify_branch(branch, ledger_bytes(location))
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    for problem in found.problems:
        typer.echo(f"{branch.describe()}: {problem}", err=True)
    if not found.ok:
        typer.echo(f"{branch.describe()}: BROKEN", err=True)
        raise SystemExit(1)
    typer.echo(
        f"{branch.describe()}: ok, {found.commits} commits, each only appended; its head "
        "holds the ledger"
    )


@ledger_app.command("export")
def export_command(
    out: Path = typer.Option(..., "--out", help="The ledger file to write (new)."),
    ledger: str = LEDGER_OPTION,
) -> None:
    """Copy a ledger's entries, verified, into a ledger file (e.g. a PostgreSQL ledger for
    `harness report --ledger FILE`, or an archive): its rows are the file's very lines."""
    location: Location = as_location(ledger)
    if not exists(location):
        raise HarnessError(f"no ledger at {ledger}", hint="pass --ledger FILE|URL")
    if out.exists():
        raise HarnessError(f"{out} exists", hint="give --out a new file")
    try:
        report = verify(location)
        lines = entry_lines(location)
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    if not report.ok:
        line, problem = report.problems[0]
        raise HarnessError(
            f"{where(location)}:{line}: {problem}; a broken chain is not exported",
            hint="run `harness ledger verify` to see every problem",
        )
    complete = [line for line in lines[: report.entries] if line]
    write_atomic(out, b"".join(line + b"\n" for line in complete))
    if verify(out).entries != report.entries or verify(out).head != report.head:
        raise HarnessError(f"{out}: the copy does not verify as the ledger does")
    typer.echo(f"exported {report.entries} entries to {out}, head {report.head}")


@ledger_app.command("open-stage")
def open_stage(
    stage: str = typer.Argument(..., help="Stage name, e.g. pilot."),
    cap: str = typer.Option(..., "--cap", help="The stage's cap in USD."),
    replace: bool = typer.Option(False, "--replace", help="Change the cap of an open stage."),
    ledger: str = LEDGER_OPTION,
) -> None:
    """Open a stage with a cap (runs reserve their caps inside it)."""
    from harness.run.live import cap_usd

    # Before the ledger is opened: a refusal creates no file. Zero closes a stage.
    dollars = cap_usd(cap, "--cap", allow_zero=True)
    with _open(ledger, must_exist=False) as led:
        entry = led.open_stage(stage, dollars, replace=replace)
    typer.echo(f"stage {stage!r} cap ${cap}" + (" (unchanged)" if entry is None else ""))


@ledger_app.command("settle")
def settle(
    run: str = typer.Argument(..., help="The run id a crashed proxy left open."),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help="The run's directory: settle at its calls.jsonl total."
    ),
    ledger: str = LEDGER_OPTION,
) -> None:
    """Settle a run a crashed proxy left open: at its call log's total, or its full reservation.

    The total is never below the settlements already booked in the ledger.
    """
    from harness.run.live import settle_left_open

    with _open(ledger) as led:
        done = settle_left_open(led, run, run_dir)
    if done.basis == "call_log":
        typer.echo(f"settled {run} from its call log at ${done.total_usd} ({done.note})")
    else:
        typer.echo(
            f"settled {run} at its full reservation ${done.total_usd} (no --run-dir given; "
            f"booked calls ${done.booked_usd}). Reconcile it to replace this with the vendor's "
            "figure."
        )


@ledger_app.command("reconcile")
def reconcile(
    export: Path = typer.Argument(..., help="A usage CSV (format below)."),
    run: list[str] = typer.Option(
        [], "--run", help="A run the rows without run_id belong to (repeatable)."
    ),
    prices: Path | None = PRICES_OPTION,
    ledger: str = LEDGER_OPTION,
) -> None:
    """Record the vendor's figure for settled runs and print the difference.

    CSV columns: date,model (required), input_tokens, output_tokens, cache_read_tokens,
    cache_write_5m_tokens, cache_write_1h_tokens, cost_usd, run_id (optional). A row's cost is
    cost_usd when given, else its tokens at the price table's rates. Rows without run_id belong
    to the --run runs. Lines starting with # are comments.
    """
    try:
        table = load_prices(prices)
        usage = read_usage_export(export, table)
        groups = group_by_runs(usage.rows, run, export)
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    with _open(ledger) as led:
        for run_ids, vendor in groups.items():
            entry = led.reconcile(run_ids, vendor, export.name, usage.sha256)
            computed = Decimal(entry.fields["computed_usd"])
            diff = vendor - computed
            pct = f" ({diff / computed:+.1%})" if computed else ""
            typer.echo(
                f"reconciled {', '.join(run_ids)}: vendor ${vendor}, computed ${computed}, "
                f"difference ${diff:+}{pct}"
            )


def render_model(price: ModelPrice) -> str:
    lines = [
        f"{price.name} ({price.vendor})"
        + (f", aliases: {', '.join(price.aliases)}" if price.aliases else ""),
        f"  max output {price.max_output_tokens} tokens, context {price.context_window}",
        "  USD per million tokens: input, output, cache write 5m, cache write 1h, cache read, "
        "reasoning",
    ]
    for label, r in [
        ("base", price.base_rates()),
        *((f"> {t.above_input_tokens}", t) for t in price.tiers),
    ]:
        lines.append(f"  {label:>10}: {r.input} {r.output} {r.cw5m} {r.cw1h} {r.cread} {r.reason}")
    if price.notes:
        lines.append(f"  note: {price.notes}")
    return "\n".join(lines)


@prices_app.command("show")
def prices_show(
    model: str | None = typer.Argument(None, help="One model (id or alias)."),
    prices: Path | None = PRICES_OPTION,
) -> None:
    """Print the price table, or one model's prices."""
    try:
        table = load_prices(prices)
        if model is not None:
            typer.echo(render_model(table.model(model)))
            return
    except LedgerError as e:
        raise HarnessError(str(e)) from e
    typer.echo(
        f"price table {table.source}: version {table.table_version}, checked {table.checked}, "
        f"{table.currency}, sha256 {table.sha256}"
    )
    if table.check_note:
        typer.echo(f"note: {table.check_note}")
    rows = [["model", "vendor", "input", "output", "cw 5m", "cw 1h", "read", "tiers", "max out"]]
    for name in table.names():
        p = table.model(name)
        rows.append(
            [
                name,
                p.vendor,
                str(p.input),
                str(p.output),
                str(p.cw5m),
                str(p.cw1h),
                str(p.cread),
                ", ".join(f">{t.above_input_tokens}" for t in p.tiers) or "-",
                str(p.max_output_tokens),
            ]
        )
    typer.echo(_table(rows))
