"""The statistics room: intervals, tests, judge-free scorers and controls for study reports.

Pure numpy/scipy; it imports nothing else of the harness, so the report (or anyone holding a
run's `records.jsonl`) can recompute every figure with it.
"""

from harness.stats.bootstrap import Interval, mean_interval, paired_cluster_bootstrap
from harness.stats.significance import discordant_pairs, holm, holm_rejects, mcnemar

__all__ = [
    "Interval",
    "discordant_pairs",
    "holm",
    "holm_rejects",
    "mcnemar",
    "mean_interval",
    "paired_cluster_bootstrap",
]
