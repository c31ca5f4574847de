"""A run's own records: its header (`run.json`), the manifest that seals it, the protocol and the
resource limits it ran under, its shard, the determinism gate's record (`gate.json`) and the items
set aside after it (`voids.jsonl`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

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
