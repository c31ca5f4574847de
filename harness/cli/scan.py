"""`harness scan RUN_DIR --canaries FILE [--forget FILE] [--store ARM=DIR ...]`."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.errors import HarnessError


def scan(
    run_dir: Path = typer.Argument(..., help="A run directory (runs/<run-id>)."),
    canaries: Path | None = typer.Option(
        None,
        "--canaries",
        help="Canary tokens: JSONL or TOML of {token, item, event_turn|event_time}.",
    ),
    forget: Path | None = typer.Option(
        None, "--forget", help="Forgotten words: JSONL or TOML of {word, item, forget_turn}."
    ),
    store: list[str] = typer.Option(
        [],
        "--store",
        help="ARM=DIR: a store the arm exported (repeatable); DIR alone if its "
        "folder is named after the arm.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the scan result as JSON."),
    out: Path | None = typer.Option(
        None, "--out", help="Also write the result as JSON to this file (not inside the run)."
    ),
) -> int:
    """Search every request and response body, turn text and exported store of a run for canary
    tokens and forgotten words. Exits 1 when a canary served before its event voids an arm."""
    from harness.checks import Canary, ForgetWord, load_entries, scan_run

    if canaries is None and forget is None:
        raise HarnessError(
            "nothing to search for", hint="pass --canaries FILE and/or --forget FILE"
        )
    if out is not None and out.resolve().is_relative_to(run_dir.resolve()):
        # The run's files are hashed in its manifest; a new one there would fail `harness audit`.
        raise HarnessError(f"--out {out} is inside the run", hint="write it next to the run")
    planted = load_entries(canaries, Canary, "canary") if canaries else []
    words = load_entries(forget, ForgetWord, "forget") if forget else []
    result = scan_run(run_dir, planted, words, _stores(store))
    dumped = result.model_dump_json(by_alias=True, indent=2)
    if out is not None:
        out.write_text(dumped + "\n", encoding="utf-8")
    if as_json:
        typer.echo(dumped)
    else:
        for hit in result.hits:
            typer.echo(f"{'VOID ' if hit.voids else ''}{hit.arm}: {hit.reason}")
        for problem in result.unreadable:
            typer.echo(f"unreadable: {problem}")
        counts = ", ".join(f"{n} {what}" for what, n in result.searched.items())
        typer.echo(f"searched {counts}; {len(result.hits)} hits")
        for name in result.void_arms:
            typer.echo(f"arm {name} is VOID: " + "; ".join(result.arms[name].reasons))
    return 1 if result.void_arms else 0


def _stores(specs: list[str]) -> dict[str, list[Path]]:
    stores: dict[str, list[Path]] = {}
    for spec in specs:
        arm, sep, folder = spec.partition("=")
        path = Path(folder if sep else spec)
        name = arm if sep else path.name
        if not path.is_dir():
            raise HarnessError(f"--store {spec}: {path} is not a folder", hint="--store ARM=DIR")
        stores.setdefault(name, []).append(path)
    return stores
