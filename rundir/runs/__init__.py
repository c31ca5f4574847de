"""A run's own records: its header (`run.json`), the manifest that seals it, the protocol and the
resource limits it ran under, its shard, the determinism gate's record (`gate.json`) and the items
set aside after it (`voids.jsonl`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rundir.runs.gate_record import (
        GATE_FILE,
        Divergence,
        GateCounts,
        GateRecord,
        GateRequest,
        GateRun,
        PairCheck,
        passing_gate,
        read_gate,
    )
    from rundir.runs.header import (
        RunHeader,
        StudyRun,
        new_run_id,
        now_iso,
        read_header,
        sha256_file,
        versions,
        write_header,
    )
    from rundir.runs.limits import AppliedLimits, ResourceLimits
    from rundir.runs.manifest import NOT_LISTED, Manifest, file_sha256, tool_version
    from rundir.runs.protocol import ADDENDUM_COPY, FrozenHash, ProtocolRecord, addendum_copies
    from rundir.runs.seal import write_manifest
    from rundir.runs.shards import MergedShard, Shard, shard_items
    from rundir.runs.voids import (
        VOIDS_FILE,
        VoidRecord,
        append_void,
        chain_next,
        void_problems,
        voided_items,
    )

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ADDENDUM_COPY": "rundir.runs.protocol",
    "AppliedLimits": "rundir.runs.limits",
    "Divergence": "rundir.runs.gate_record",
    "FrozenHash": "rundir.runs.protocol",
    "GATE_FILE": "rundir.runs.gate_record",
    "GateCounts": "rundir.runs.gate_record",
    "GateRecord": "rundir.runs.gate_record",
    "GateRequest": "rundir.runs.gate_record",
    "GateRun": "rundir.runs.gate_record",
    "Manifest": "rundir.runs.manifest",
    "MergedShard": "rundir.runs.shards",
    "NOT_LISTED": "rundir.runs.manifest",
    "PairCheck": "rundir.runs.gate_record",
    "ProtocolRecord": "rundir.runs.protocol",
    "ResourceLimits": "rundir.runs.limits",
    "RunHeader": "rundir.runs.header",
    "Shard": "rundir.runs.shards",
    "StudyRun": "rundir.runs.header",
    "VOIDS_FILE": "rundir.runs.voids",
    "VoidRecord": "rundir.runs.voids",
    "addendum_copies": "rundir.runs.protocol",
    "append_void": "rundir.runs.voids",
    "chain_next": "rundir.runs.voids",
    "file_sha256": "rundir.runs.manifest",
    "new_run_id": "rundir.runs.header",
    "now_iso": "rundir.runs.header",
    "passing_gate": "rundir.runs.gate_record",
    "read_gate": "rundir.runs.gate_record",
    "read_header": "rundir.runs.header",
    "sha256_file": "rundir.runs.header",
    "shard_items": "rundir.runs.shards",
    "tool_version": "rundir.runs.manifest",
    "versions": "rundir.runs.header",
    "void_problems": "rundir.runs.voids",
    "voided_items": "rundir.runs.voids",
    "write_header": "rundir.runs.header",
    "write_manifest": "rundir.runs.seal",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "ADDENDUM_COPY",
    "GATE_FILE",
    "NOT_LISTED",
    "VOIDS_FILE",
    "AppliedLimits",
    "Divergence",
    "FrozenHash",
    "GateCounts",
    "GateRecord",
    "GateRequest",
    "GateRun",
    "Manifest",
    "MergedShard",
    "PairCheck",
    "ProtocolRecord",
    "ResourceLimits",
    "RunHeader",
    "Shard",
    "StudyRun",
    "VoidRecord",
    "addendum_copies",
    "append_void",
    "chain_next",
    "file_sha256",
    "new_run_id",
    "now_iso",
    "passing_gate",
    "read_gate",
    "read_header",
    "sha256_file",
    "shard_items",
    "tool_version",
    "versions",
    "void_problems",
    "voided_items",
    "write_header",
    "write_manifest",
]
