"""`harness proxy serve`: the proxy standalone, for developers of arms and for tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from harness.cli.lazy import typer_app
from harness.errors import HarnessError
from harness.isolation.sdk_env import sdk_env
from rundir.runs.header import RunHeader, new_run_id, now_iso, sha256_file, versions, write_header

proxy_app = typer_app(help="Run the harness proxy on its own.", no_args_is_help=True)


# The OS rule on the proxy's own traffic (docs/ledger-branch.md) confines a proxy the harness
# starts as a container or a child process in a cgroup; `serve` is the proxy in this very
# process, started by the user, so nothing confines what it connects to.
SERVE_PROXY_RULE = (
    "not enforced: `harness proxy serve` runs the proxy in this process, outside any container "
    "or cgroup the harness confines (a study run's proxy is: `harness live --isolation docker`, "
    "or local as root)"
)


def exports(host: str, port: int) -> str:
    """Shell exports of `sdk_env`, as `harness proxy serve` prints them."""
    return "\n".join(f"export {key}={value}" for key, value in sdk_env(host, port).items())


@proxy_app.command("serve")
def serve_command(
    mode: str = typer.Option(
        "record",
        help="record: answer every call from stubs, free. live: forward to the vendors with the "
        "study's key (from this process's ANTHROPIC_API_KEY / OPENAI_API_KEY), metered and capped. "
        "replay: answer from --replay-from's recorded calls, no key, no network.",
    ),
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
    cap: str | None = typer.Option(None, help="Live: the run's cap in USD (required in live)."),
    prices: Path | None = typer.Option(None, help="Live: price table TOML (default: packaged)."),
    ledger: str | None = typer.Option(
        None,
        envvar=["HARNESS_LEDGER_URL", "HARNESS_LEDGER"],
        help="Live: the spend ledger, a file (default ledger.jsonl) or a postgresql:// URL "
        "without a password (PGPASSWORD or ~/.pgpass hold it).",
    ),
    stage: str = typer.Option("default", help="Live: ledger stage the run is charged to."),
    stage_cap: str | None = typer.Option(
        None, help="Live: the stage's cap in USD when the stage is new (default: --cap)."
    ),
    upstream: list[str] = typer.Option(
        [], help="Live: VENDOR=URL base URL override, e.g. openai=https://host (repeatable)."
    ),
    ca_bundle: Path | None = typer.Option(None, help="Live: CA bundle to trust for upstream TLS."),
    deadline: float = typer.Option(60.0, help="Live: upstream deadline per call, in seconds."),
    pins: Path | None = typer.Option(None, help="Live: TOML file of pinned sampling values."),
    replay_from: Path | None = typer.Option(
        None, help="Replay: the run directory whose recorded calls are served."
    ),
    new_ledger_branch: bool = typer.Option(
        False,
        "--new-ledger-branch",
        help="Live: start $HARNESS_LEDGER_BRANCH in $HARNESS_LEDGER_GIT although the ledger "
        "already holds entries (without it a missing branch is refused).",
    ),
) -> None:
    """Serve until interrupted, printing the shell exports that point SDKs at the proxy.

    Logs go to stderr; stdout carries only the exports, so `eval "$(harness proxy serve ...)"` is
    not the use: run it in one shell and paste the exports into another.
    """
    if mode not in ("record", "live", "replay"):
        raise HarnessError(
            f"proxy mode {mode!r} is not available", hint="use record, live or replay"
        )
    if mode == "replay" and replay_from is None:
        raise HarnessError("replay mode needs a run to replay", hint="pass --replay-from RUN_DIR")
    if mode == "live" and not cap:
        raise HarnessError("live mode needs a cap", hint="pass --cap USD, e.g. --cap 10")
    if mode == "live":
        _live_checks(cap or "", stage_cap, ledger or "ledger.jsonl", new_ledger_branch)
    for name, path in (("--prices", prices), ("--ca-bundle", ca_bundle), ("--pins", pins)):
        if path is not None and not path.is_file():
            raise HarnessError(f"{name} file {path} does not exist")
    if stubs is not None and not stubs.is_file():
        raise HarnessError(f"stubs file {stubs} does not exist", hint="give a path to a TOML file")
    from ledger.errors import LedgerError
    from ledger.ledger import as_location, is_url, refuse_password

    ledger_at = as_location(ledger or "ledger.jsonl")
    try:
        refuse_password(ledger_at)
    except LedgerError as e:
        raise HarnessError(str(e)) from None
    # mitmproxy takes seconds to import: only the command that runs the proxy pays for it.
    from mitmproxy.exceptions import OptionsError

    from proxy.app.server import serve
    from rundir.control.proxy_file import ProxySettings

    run_id = run_dir.name if run_dir else new_run_id("proxy")
    run_dir = run_dir or Path("runs") / run_id
    header = RunHeader(
        run_id=run_id,
        mode="live" if mode == "live" else "replay" if mode == "replay" else "record",
        kind="proxy",
        started=now_iso(),
        stubs_sha256=sha256_file(stubs) if stubs else None,
        versions=versions(),
        proxy_rule=SERVE_PROXY_RULE,
    )
    # Said before anything is served, so a user holding keys knows (run.json says it too).
    print(f"# proxy's own traffic: {SERVE_PROXY_RULE}", file=sys.stderr, flush=True)
    job = None
    if mode == "live":
        from harness.run.live.live_job import live_job

        # One live job at a time on this ledger: refused here, before a run directory exists.
        job = live_job(ledger_at, run_id, run_dir)
    try:
        write_header(run_dir, header)
    except OSError as e:
        if job is not None:
            job.release()
        raise HarnessError(f"cannot write run directory {run_dir}: {e.strerror}") from e
    settings = ProxySettings(
        run_dir=run_dir,
        run_id=run_id,
        mode=header.mode,
        arm=arm,
        stubs=stubs,
        body_limit=body_limit,
        masks=mask,
        cap=cap or "",
        prices=prices,
        ledger=ledger_at if isinstance(ledger_at, Path) else None,
        ledger_url=ledger_at if is_url(ledger_at) else "",
        stage=stage,
        stage_cap=stage_cap or "",
        upstreams=upstream,
        ca_bundle=ca_bundle,
        deadline=deadline,
        pins=pins,
        replay_from=replay_from,
    )

    def on_ready(listen_host: str, listen_port: int) -> None:
        print(f"# harness proxy ({mode}) on {listen_host}:{listen_port}, run {run_dir}")
        print(exports(listen_host, listen_port), flush=True)

    try:
        asyncio.run(serve(settings, host, port, on_ready))
    except KeyboardInterrupt:
        pass
    except OptionsError as e:
        raise HarnessError(str(e)) from e
    except OSError as e:
        raise HarnessError(
            f"cannot listen on {host}:{port}: {e.strerror}",
            hint="pick another --port, or 0 for a free one",
        ) from e
    finally:
        try:
            _close_run(run_dir, header, live=mode == "live", prices=prices, ledger_at=ledger_at)
            if job is not None:
                from harness.run.live.live_job import commit_to_branch
                from ledger.git_branch import from_environment

                # The run is settled: commit the ledger to $HARNESS_LEDGER_GIT's branch, if set.
                commit_to_branch(ledger_at, from_environment(None, None), run_id)
        finally:
            if job is not None:
                job.release()


def _live_checks(cap: str, stage_cap: str | None, ledger: str, new_branch: bool) -> None:
    """Before run.json or a lock exists: the caps as dollars, a vendor key, and the ledger's
    branch ($HARNESS_LEDGER_GIT), each refused in one line naming the option."""
    from harness.run.live.live_checks import cap_usd, check_branch, check_keys
    from ledger.git_branch import from_environment
    from ledger.ledger import as_location

    cap_usd(cap, "--cap")
    if stage_cap:
        cap_usd(stage_cap, "--stage-cap")
    check_keys(set())
    check_branch(from_environment(None, None), as_location(ledger), new_branch=new_branch)


def _close_run(
    run_dir: Path, header: RunHeader, *, live: bool, prices: Path | None, ledger_at: Path | str
) -> None:
    """The proxy has stopped: list the run's files and the price table and ledger it used."""
    from ledger.ledger import chain_end
    from rundir.runs.seal import write_manifest

    header.ended = now_iso()
    packaged = Path(__file__).resolve().parents[2] / "ledger" / "prices.toml"
    ledger_file = ledger_at if live else None
    write_manifest(
        run_dir,
        header,
        prices=(prices or packaged) if live else None,
        ledger=ledger_file,
        ledger_chain=chain_end(ledger_file) if ledger_file else None,
    )
    print(f"# harness proxy stopped; calls in {run_dir / 'calls.jsonl'}", file=sys.stderr)
