"""A run's own records: its header (`run.json`), the manifest that seals it, the protocol and the
resource limits it ran under, its shard, the determinism gate's record (`gate.json`) and the items
set aside after it (`voids.jsonl`).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "gate_record",
    "header",
    "limits",
    "manifest",
    "protocol",
    "seal",
    "shards",
    "voids",
]
