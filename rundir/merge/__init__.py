"""`harness merge`: the shards of one study joined into one run directory (join), the checks made
before anything is written and again by the audit (checks), and which run of each shard a folder
gives (pick).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from rundir.merge.checks import shard_findings
from rundir.merge.join import merge_shards
from rundir.merge.pick import pick_runs

__all__ = [
    "merge_shards",
    "pick_runs",
    "shard_findings",
]
