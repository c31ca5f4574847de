"""`harness proxy serve`: the proxy standalone, for developers of arms and for tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from harness.errors import HarnessError
from harness.rundir import RunHeader, new_run_id, now_iso, sha256_file, versions, write_header
from proxy.server import ProxyConfig, serve

PLACEHOLDER_KEY = "harness-placeholder-key"

proxy_app = typer.Typer(help="Run the harness proxy on its own.", no_args_is_help=True)


def exports(host: str, port: int) -> str:
    """Shell exports that point the official SDKs at the proxy, with placeholder keys."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    base = f"http://{shown}:{port}"
    lines = [
        f"export ANTHROPIC_BASE_URL={base}/anthropic",
        f"export ANTHROPIC_API_KEY={PLACEHOLDER_KEY}",
        f"export OPENAI_BASE_URL={base}/openai/v1",
        f"export OPENAI_API_KEY={PLACEHOLDER_KEY}",
        f"export CO_API_URL={base}/cohere",
        f"export CO_API_KEY={PLACEHOLDER_KEY}",
        f"export VOYAGE_API_BASE={base}/voyage/v1",
        f"export VOYAGE_API_KEY={PLACEHOLDER_KEY}",
    ]
    return "\n".join(lines)


@proxy_app.command("serve")
def serve_command(
    mode: str = typer.Option("record", help="record: answer every call from stubs, free."),
    port: int = typer.Option(8080, help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    stubs: Path | None = typer.Option(
        None, help="A stubs TOML file layered on the default replies (rules, replies, delays)."
    ),
    run_dir: Path | None = typer.Option(
        None, help="Where calls.jsonl and bodies/ go. Default: runs/<new run id>/."
    ),
    arm: str = typer.Option("default", help="Arm name written in every call record."),
    body_limit: int = typer.Option(32 * 1024 * 1024, help="Largest request body, in bytes."),
    mask: list[str] = typer.Option(
        [], help="Extra dotted body path to mask from the request hash (repeatable)."
    ),
) -> None:
    """Serve until interrupted, printing the shell exports that point SDKs at the proxy.

    Logs go to stderr; stdout carries only the exports, so `eval "$(harness proxy serve ...)"` is
    not the use: run it in one shell and paste the exports into another.
    """
    if mode != "record":
        raise HarnessError(f"proxy mode {mode!r} is not available yet", hint="use --mode record")
    if stubs is not None and not stubs.is_file():
        raise HarnessError(f"stubs file {stubs} does not exist", hint="give a path to a TOML file")
    run_id = run_dir.name if run_dir else new_run_id("proxy")
    run_dir = run_dir or Path("runs") / run_id
    header = RunHeader(
        run_id=run_id,
        mode="record",
        kind="proxy",
        started=now_iso(),
        stubs_sha256=sha256_file(stubs) if stubs else None,
        versions=versions(),
    )
    try:
        write_header(run_dir, header)
    except OSError as e:
        raise HarnessError(f"cannot write run directory {run_dir}: {e.strerror}") from e
    config = ProxyConfig(
        run_dir=run_dir,
        run_id=run_id,
        mode=mode,
        host=host,
        port=port,
        arm=arm,
        stubs=stubs,
        body_limit=body_limit,
        masks=mask,
    )

    def on_ready(listen_host: str, listen_port: int) -> None:
        print(f"# harness proxy ({mode}) on {listen_host}:{listen_port}, run {run_dir}")
        print(exports(listen_host, listen_port), flush=True)

    try:
        asyncio.run(serve(config, on_ready))
    except KeyboardInterrupt:
        pass
    except OSError as e:
        raise HarnessError(
            f"cannot listen on {host}:{port}: {e.strerror}",
            hint="pick another --port, or 0 for a free one",
        ) from e
    finally:
        header.ended = now_iso()
        write_header(run_dir, header)
        print(f"# harness proxy stopped; calls in {run_dir / 'calls.jsonl'}", file=sys.stderr)
