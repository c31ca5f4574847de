"""`harness proxy serve`: the proxy standalone, for developers of arms and for tests."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from harness.cli.lazy import typer_app
from harness.errors import HarnessError
from harness.isolation import sdk_env
from rundir.runs import RunHeader, new_run_id, now_iso, sha256_file, versions, write_header

if TYPE_CHECKING:
    from ledger.live_job import LiveJob
    from rundir.control import ProxySettings

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


# serve's options, one per line of its signature (several only matter in one mode).
MODE = typer.Option(
    "record",
    help="record: answer every call from stubs, free. live: forward to the vendors with the "
    "study's key (from this process's ANTHROPIC_API_KEY / OPENAI_API_KEY), metered and capped. "
    "replay: answer from --replay-from's recorded calls, no key, no network.",
)
PORT = typer.Option(8080, help="Port to listen on (0 picks a free one).")
HOST = typer.Option("127.0.0.1", help="Address to listen on.")
STUBS = typer.Option(
    None, help="A stubs TOML file layered on the default replies (rules, replies, delays)."
)
RUN_DIR = typer.Option(None, help="Where calls.jsonl and bodies/ go. Default: runs/<new run id>/.")
ARM = typer.Option("default", help="Arm name written in every call record.")
BODY_LIMIT = typer.Option(32 * 1024 * 1024, help="Largest request body, in bytes.")
MASK = typer.Option([], help="Extra dotted body path to mask from the request hash (repeatable).")
CAP = typer.Option(None, help="Live: the run's cap in USD (required in live).")
PRICES = typer.Option(None, help="Live: price table TOML (default: packaged).")
LEDGER = typer.Option(
    None,
    envvar=["HARNESS_LEDGER_URL", "HARNESS_LEDGER"],
    help="Live: the spend ledger, a file (default ledger.jsonl) or a postgresql:// URL "
    "without a password (PGPASSWORD or ~/.pgpass hold it).",
)
STAGE = typer.Option("default", help="Live: ledger stage the run is charged to.")
STAGE_CAP = typer.Option(
    None, help="Live: the stage's cap in USD when the stage is new (default: --cap)."
)
UPSTREAM = typer.Option(
    [], help="Live: VENDOR=URL base URL override, e.g. openai=https://host (repeatable)."
)
CA_BUNDLE = typer.Option(None, help="Live: CA bundle to trust for upstream TLS.")
DEADLINE = typer.Option(60.0, help="Live: upstream deadline per call, in seconds.")
PINS = typer.Option(None, help="Live: TOML file of pinned sampling values.")
REPLAY_FROM = typer.Option(None, help="Replay: the run directory whose recorded calls are served.")
NEW_LEDGER_BRANCH = typer.Option(
    False,
    "--new-ledger-branch",
    help="Live: start $HARNESS_LEDGER_BRANCH in $HARNESS_LEDGER_GIT although the ledger "
    "already holds entries (without it a missing branch is refused).",
)


@proxy_app.command("serve")
def serve_command(
    mode: str = MODE,
    port: int = PORT,
    host: str = HOST,
    stubs: Path | None = STUBS,
    run_dir: Path | None = RUN_DIR,
    arm: str = ARM,
    body_limit: int = BODY_LIMIT,
    mask: list[str] = MASK,
    cap: str | None = CAP,
    prices: Path | None = PRICES,
    ledger: str | None = LEDGER,
    stage: str = STAGE,
    stage_cap: str | None = STAGE_CAP,
    upstream: list[str] = UPSTREAM,
    ca_bundle: Path | None = CA_BUNDLE,
    deadline: float = DEADLINE,
    pins: Path | None = PINS,
    replay_from: Path | None = REPLAY_FROM,
    new_ledger_branch: bool = NEW_LEDGER_BRANCH,
) -> None:
    """Serve until interrupted, printing the shell exports that point SDKs at the proxy.

    Logs go to stderr; stdout carries only the exports, so `eval "$(harness proxy serve ...)"` is
    not the use: run it in one shell and paste the exports into another.
    """
    _check_mode(mode, replay_from, cap)
    if mode == "live":
        _live_checks(cap or "", stage_cap, ledger or "ledger.jsonl", new_ledger_branch)
    _check_files(stubs=stubs, prices=prices, ca_bundle=ca_bundle, pins=pins)
    ledger_at = _ledger_location(ledger)
    from rundir.control import ProxySettings

    run = _start_run(mode, run_dir, stubs, ledger_at)
    settings = ProxySettings(
        run_dir=run.run_dir,
        run_id=run.header.run_id,
        mode=run.header.mode,
        arm=arm,
        stubs=stubs,
        body_limit=body_limit,
        masks=mask,
        cap=cap or "",
        prices=prices,
        ledger=ledger_at if isinstance(ledger_at, Path) else None,
        ledger_url=ledger_at if isinstance(ledger_at, str) else "",  # a URL (as_location)
        stage=stage,
        stage_cap=stage_cap or "",
        upstreams=upstream,
        ca_bundle=ca_bundle,
        deadline=deadline,
        pins=pins,
        replay_from=replay_from,
    )
    try:
        _serve(settings, host, port)
    finally:
        _end_run(run, prices=prices, ledger_at=ledger_at)


def _check_mode(mode: str, replay_from: Path | None, cap: str | None) -> None:
    """The mode, and what it cannot run without, each refused in one line."""
    if mode not in ("record", "live", "replay"):
        raise HarnessError(
            f"proxy mode {mode!r} is not available", hint="use record, live or replay"
        )
    if mode == "replay" and replay_from is None:
        raise HarnessError("replay mode needs a run to replay", hint="pass --replay-from RUN_DIR")
    if mode == "live" and not cap:
        raise HarnessError("live mode needs a cap", hint="pass --cap USD, e.g. --cap 10")


def _check_files(*, stubs: Path | None, **files: Path | None) -> None:
    """Every file option names a file that exists (`ca_bundle` is `--ca-bundle`)."""
    for name, path in files.items():
        if path is not None and not path.is_file():
            raise HarnessError(f"--{name.replace('_', '-')} file {path} does not exist")
    if stubs is not None and not stubs.is_file():
        raise HarnessError(f"stubs file {stubs} does not exist", hint="give a path to a TOML file")


def _ledger_location(ledger: str | None) -> Path | str:
    """The ledger's file or URL (default ledger.jsonl here); a URL holding a password is refused."""
    from ledger.errors import LedgerError
    from ledger.ledger import as_location, refuse_password

    ledger_at = as_location(ledger or "ledger.jsonl")
    try:
        refuse_password(ledger_at)
    except LedgerError as e:
        raise HarnessError(str(e)) from None
    return ledger_at


@dataclass
class _ServedRun:
    """The run the proxy serves: its directory, header, and (live) its hold on the ledger."""

    run_dir: Path
    header: RunHeader
    job: LiveJob | None


def _start_run(
    mode: str, run_dir: Path | None, stubs: Path | None, ledger_at: Path | str
) -> _ServedRun:
    """The run's header written (and, live, the ledger's one live job held) before serving."""
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
        from harness.run.live import live_job

        # One live job at a time on this ledger: refused here, before a run directory exists.
        job = live_job(ledger_at, run_id, run_dir)
    try:
        write_header(run_dir, header)
    except OSError as e:
        if job is not None:
            job.release()
        raise HarnessError(f"cannot write run directory {run_dir}: {e.strerror}") from e
    return _ServedRun(run_dir, header, job)


def _serve(settings: ProxySettings, host: str, port: int) -> None:
    """Serve until interrupted (Ctrl-C ends it as a normal stop)."""
    # mitmproxy takes seconds to import: only the command that runs the proxy pays for it.
    from mitmproxy.exceptions import OptionsError

    from proxy.app import serve

    def on_ready(listen_host: str, listen_port: int) -> None:
        where = f"{listen_host}:{listen_port}"
        print(f"# harness proxy ({settings.mode}) on {where}, run {settings.run_dir}")
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


def _end_run(run: _ServedRun, *, prices: Path | None, ledger_at: Path | str) -> None:
    """The proxy has stopped: the run's manifest; live, the ledger committed to its branch and
    the live job released (released even if the manifest or the commit fails)."""
    try:
        live = run.header.mode == "live"
        _close_run(run.run_dir, run.header, live=live, prices=prices, ledger_at=ledger_at)
        if run.job is not None:
            from harness.run.live import commit_to_branch
            from ledger.git_branch import from_environment

            # The run is settled: commit the ledger to $HARNESS_LEDGER_GIT's branch, if set.
            commit_to_branch(ledger_at, from_environment(None, None), run.header.run_id)
    finally:
        if run.job is not None:
            run.job.release()


def _live_checks(cap: str, stage_cap: str | None, ledger: str, new_branch: bool) -> None:
    """Before run.json or a lock exists: the caps as dollars, a vendor key, and the ledger's
    branch ($HARNESS_LEDGER_GIT), each refused in one line naming the option."""
    from harness.run.live import cap_usd, check_branch, check_keys
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
    from rundir.runs import write_manifest

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
