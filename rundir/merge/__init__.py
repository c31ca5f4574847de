"""`harness merge`: the shards of one study joined into one run directory (join), the checks made
before anything is written and again by the audit (checks), and which run of each shard a folder
gives (pick).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rundir.merge.checks import shard_findings
    from rundir.merge.join import merge_shards
    from rundir.merge.pick import pick_runs

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "merge_shards": "rundir.merge.join",
    "pick_runs": "rundir.merge.pick",
    "shard_findings": "rundir.merge.checks",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "merge_shards",
    "pick_runs",
    "shard_findings",
]
