"""One live job at a time (`ledger/live_job.py`), as `harness live` and `harness proxy serve`
take it: claimed before the proxy gets the keys, released once the run is settled.

A claim whose holder died (`kill -9`) is taken over and the takeover recorded in the ledger,
unless what that job started still runs: a harness killed with -9 leaves its proxy (its own
process group, or a container) running with the keys, so the job is not over until
`harness cleanup` stops it.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import structlog

from harness.errors import HarnessError
from ledger.errors import LedgerError
from ledger.git_branch import LedgerBranch, commit_ledger, ledger_bytes
from ledger.ledger import Ledger, Location
from ledger.live_job import Holder, LiveJob, claim, process_start, this_process

log = structlog.get_logger("harness.live_job")


def leftovers(stale: Holder) -> str | None:
    """What of a dead job still runs (its processes by pid and start time, its containers), or
    None. Another host's processes cannot be seen from here: its claim is taken as dead."""
    if stale.host != socket.gethostname():
        return None
    running: list[str] = []
    pids = Path(stale.run_dir) / "pids.json" if stale.run_dir else None
    if pids is not None and pids.is_file():
        try:
            data = json.loads(pids.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        for entry in data.get("processes", []):
            if process_start(int(entry["pid"])) == entry.get("start"):
                running.append(f"{entry['name']} (pid {entry['pid']})")
    running += _containers(stale.run_id)
    if not running:
        return None
    where = Path(stale.run_dir).parent if stale.run_dir else "RUN_ROOT"
    return (
        f"run {stale.run_id} died holding the keys but its {', '.join(running)} still "
        f"run(s) with them: stop them with `harness cleanup --run-dir {where}`"
    )


def _containers(run_id: str) -> list[str]:
    from harness.isolation import RUN_LABEL
    from harness.isolation.docker import docker, engine_answers

    try:
        if not engine_answers():
            return []
        listing = docker(["container", "ls", "--filter", f"label={RUN_LABEL}={run_id}", "-q"])
    except Exception:  # no docker here: nothing of it can run
        return []
    return [f"container {ident}" for ident in listing.split()]


def live_job(
    location: Location,
    run_id: str,
    run_dir: Path,
    *,
    job: str = "",
    slot: str = "",
) -> LiveJob:
    """The ledger's live-job slot, held until `release()` (or the end of a `with` block);
    HarnessError (one line) if another job holds it. Takeovers are recorded in the ledger."""
    holder = this_process(run_id, job=job, slot=slot, run_dir=str(run_dir.resolve()))
    try:
        held = claim(location, holder, leftover=leftovers)
    except LedgerError as e:
        raise HarnessError(str(e)) from None
    try:
        for stale in held.stale:
            with Ledger(location) as ledger:
                ledger.record_takeover(run_id, stale.run_id, stale.pid, stale.host, stale.since)
            log.warning(
                "took over the keys from a live job that died holding them",
                stale_run=stale.run_id,
                stale_pid=stale.pid,
                stale_host=stale.host,
                recorded_in=str(location),
            )
    except LedgerError as e:
        held.release()
        raise HarnessError(f"cannot record the takeover in the ledger: {e}") from None
    except BaseException:
        held.release()
        raise
    return held


def commit_to_branch(location: Location, branch: LedgerBranch | None, run_id: str) -> None:
    """Commit the ledger, with the run's entries settled in it, to the study's private branch."""
    if branch is None:
        return
    try:
        commit = commit_ledger(branch, ledger_bytes(location), f"ledger: run {run_id} settled")
    except LedgerError as e:
        raise HarnessError(
            f"run {run_id} settled, but its ledger entries were not committed: {e}",
            hint="see `harness ledger verify --git-repo REPO`",
        ) from None
    log.info(
        "ledger committed" if commit else "ledger unchanged: nothing to commit",
        branch=branch.branch,
        repo=str(branch.repo),
        commit=commit,
    )
