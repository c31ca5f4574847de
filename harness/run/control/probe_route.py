"""The day's probe decision handed to the arms (issue 25 item 8): probe.json's `route`.

`harness probe STUDY` writes probe.json next to study.toml (and into a run directory with
--run; rundir/network/probe_file.py). Arms run in containers that see neither folder, so the harness
reads the decision itself, the run directory's first, else the study folder's (the same places
the report looks), and sets HARNESS_PROBE_ROUTE (`compat` or `messages`) in every arm's
environment; with no probe.json it sets nothing and an arm keeps its default route (the toy Z:
compat). A probe.json that does not parse stops the run before any arm starts: the arm must not
guess its route.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from rundir.errors import RunDirError
from rundir.network import PROBE_FILE, read_probe

# The arm side reads it as arms.chat.PROBE_ROUTE_ENV (arms import nothing of the harness).
PROBE_ROUTE_ENV = "HARNESS_PROBE_ROUTE"


def probe_env(run_dir: Path, study_path: Path) -> dict[str, str]:
    """{HARNESS_PROBE_ROUTE: route} from the run's probe.json, else the study's; {} if none."""
    for place in (run_dir / PROBE_FILE, study_path.parent / PROBE_FILE):
        try:
            decision = read_probe(place)
        except RunDirError as e:
            raise HarnessError(str(e), hint="run `harness probe` again, or remove it") from None
        if decision is not None:
            return {PROBE_ROUTE_ENV: decision.route}
    return {}
