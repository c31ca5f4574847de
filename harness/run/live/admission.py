"""A live run's admission, checked before a stage opens or a run directory exists: a cap in
plain dollars, V0's suite record, a passing record run of this very study with no stray
connection, a passing determinism gate, the keys its vendors need and the ledger's branch. A live
run spends money only on a study that has run clean for free (`harness live`, `harness pilot`)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.run.live.live_checks import cap_usd, check_branch, check_keys, vendors_called
from harness.run.live.suite_record import check_suite
from harness.study import Study
from ledger.git_branch import from_environment
from rundir.errors import RunDirError
from rundir.runs import passing_gate, read_header


def admit_live(
    study: Study, run_root: Path, cap: str, *, skip_suite: bool, new_branch: bool
) -> tuple[Path, str]:
    """The passing gate that lets the live run start (its path) and V0's suite line, else
    HarnessError."""
    if not cap:
        raise HarnessError("live mode needs a cap", hint="pass --cap USD, e.g. --cap 10")
    cap_usd(cap)
    suite = check_suite(skip_suite)  # V0 first: no other check matters on untested code
    record = passing_record_run(study, run_root)
    if record is None:
        raise HarnessError(
            f"no passing record run of this study under {run_root}",
            hint=f"run `harness record {study.path} --run-dir {run_root}` first; "
            "live mode starts only after a record run of the same study and compose file "
            "passed with no stray connection",
        )
    gate = passing_gate(study.study_sha256, study.compose_sha256, run_root)
    if gate is None:
        raise HarnessError(
            f"no passing determinism gate of this study under {run_root}",
            hint=f"run `harness gate {study.path} --run-dir {run_root}` first; live "
            "mode starts only after two record runs of the same study and compose file sent "
            "the same requests",
        )
    check_live_needs(study, record, new_branch=new_branch)
    return gate, suite


def check_live_needs(study: Study, record_run: Path, *, new_branch: bool) -> None:
    """The keys the record run's vendors need, and the ledger's repository and branch: found
    missing here, before a stage opens or a run directory exists, not after the spend."""
    check_keys(vendors_called(record_run))
    branch = from_environment(study.file.ledger_repo, study.file.ledger_branch, study.path.parent)
    check_branch(branch, study.ledger_location, new_branch=new_branch)


def passing_record_run(study: Study, run_root: Path) -> Path | None:
    """A record run of this very study (same study and compose hashes) that passed with no
    stray connection: live mode spends money only on a study that has run clean for free."""
    for header_path in sorted(run_root.glob("*/run.json"), reverse=True):
        try:
            header = read_header(header_path.parent)
        except RunDirError:
            continue  # not a run this harness reads: never the proof a live run needs
        run = header.study
        if (
            header.mode == "record"
            and run is not None
            and run.study_sha256 == study.study_sha256
            and run.compose_sha256 == study.compose_sha256
            and run.passed
        ):
            egress = header_path.parent / "egress.jsonl"
            if egress.exists() and not egress.read_text().strip():
                return header_path.parent
    return None
