"""Judgment sets: what `harness judge` leaves in `--out SET`, for the report and the audit: the
set's records and its folder's layout (records.py), its files written and read back (files.py),
and the seal kept outside it (seal.py).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rundir.judgments.files import (
        EXACT_FILE,
        MANIFEST_FILE,
        PROMPTS_DIR,
        REPLIES_DIR,
        TASKS_FILE,
        VOTES_FILE,
        VoteLog,
        read_exact,
        read_manifest,
        read_tasks,
        read_votes,
        sha256_bytes,
        write_exact,
        write_manifest,
        write_tasks,
    )
    from rundir.judgments.records import (
        AAResult,
        AxisStatus,
        BarResult,
        ExactMatch,
        JudgePin,
        JudgmentSet,
        JudgmentTask,
        Kind,
        Phase,
        Role,
        RubricRef,
        RunRef,
        SetAside,
        Strength,
        ThirdPass,
        Vote,
    )
    from rundir.judgments.seal import (
        Seal,
        SealedArm,
        bind_seal,
        open_seal,
        read_seal,
        seal_binding,
        write_seal,
    )

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "AAResult": "rundir.judgments.records",
    "AxisStatus": "rundir.judgments.records",
    "BarResult": "rundir.judgments.records",
    "EXACT_FILE": "rundir.judgments.files",
    "ExactMatch": "rundir.judgments.records",
    "JudgePin": "rundir.judgments.records",
    "JudgmentSet": "rundir.judgments.records",
    "JudgmentTask": "rundir.judgments.records",
    "Kind": "rundir.judgments.records",
    "MANIFEST_FILE": "rundir.judgments.files",
    "PROMPTS_DIR": "rundir.judgments.files",
    "Phase": "rundir.judgments.records",
    "REPLIES_DIR": "rundir.judgments.files",
    "Role": "rundir.judgments.records",
    "RubricRef": "rundir.judgments.records",
    "RunRef": "rundir.judgments.records",
    "Seal": "rundir.judgments.seal",
    "SealedArm": "rundir.judgments.seal",
    "SetAside": "rundir.judgments.records",
    "Strength": "rundir.judgments.records",
    "TASKS_FILE": "rundir.judgments.files",
    "ThirdPass": "rundir.judgments.records",
    "VOTES_FILE": "rundir.judgments.files",
    "Vote": "rundir.judgments.records",
    "VoteLog": "rundir.judgments.files",
    "bind_seal": "rundir.judgments.seal",
    "open_seal": "rundir.judgments.seal",
    "read_exact": "rundir.judgments.files",
    "read_manifest": "rundir.judgments.files",
    "read_seal": "rundir.judgments.seal",
    "read_tasks": "rundir.judgments.files",
    "read_votes": "rundir.judgments.files",
    "seal_binding": "rundir.judgments.seal",
    "sha256_bytes": "rundir.judgments.files",
    "write_exact": "rundir.judgments.files",
    "write_manifest": "rundir.judgments.files",
    "write_seal": "rundir.judgments.seal",
    "write_tasks": "rundir.judgments.files",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "EXACT_FILE",
    "MANIFEST_FILE",
    "PROMPTS_DIR",
    "REPLIES_DIR",
    "TASKS_FILE",
    "VOTES_FILE",
    "AAResult",
    "AxisStatus",
    "BarResult",
    "ExactMatch",
    "JudgePin",
    "JudgmentSet",
    "JudgmentTask",
    "Kind",
    "Phase",
    "Role",
    "RubricRef",
    "RunRef",
    "Seal",
    "SealedArm",
    "SetAside",
    "Strength",
    "ThirdPass",
    "Vote",
    "VoteLog",
    "bind_seal",
    "open_seal",
    "read_exact",
    "read_manifest",
    "read_seal",
    "read_tasks",
    "read_votes",
    "seal_binding",
    "sha256_bytes",
    "write_exact",
    "write_manifest",
    "write_seal",
    "write_tasks",
]
