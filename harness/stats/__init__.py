"""The statistics room: intervals, tests, judge-free scorers and controls for study reports.

Pure numpy/scipy; it imports nothing else of the harness, so the report (or anyone holding a
run's `records.jsonl`) can recompute every figure with it.
"""

from harness.stats import onesided, rules
from harness.stats.answer_text import normalise
from harness.stats.bootstrap import Interval, mean_interval, paired_cluster_bootstrap
from harness.stats.controls import Comparison, ControlResult, aa_control, must_fail_control
from harness.stats.latency import (
    CallTiming,
    NetCall,
    NetTurn,
    RouteFloor,
    floors_from_calls,
    minus_round_trip,
    round_trip_floor,
    turn_minus_round_trip,
)
from harness.stats.scorers import (
    ABSTENTIONS,
    NET_LAMBDAS,
    Judgement,
    NetSweep,
    choice_log_loss,
    exact_match,
    judge_answer,
    net,
    net_item_scores,
    net_sweep,
    normalize_answer,
)
from harness.stats.significance import discordant_pairs, holm, holm_rejects, mcnemar

__all__ = [
    "ABSTENTIONS",
    "NET_LAMBDAS",
    "CallTiming",
    "Comparison",
    "ControlResult",
    "Interval",
    "Judgement",
    "NetCall",
    "NetSweep",
    "NetTurn",
    "RouteFloor",
    "aa_control",
    "choice_log_loss",
    "discordant_pairs",
    "exact_match",
    "floors_from_calls",
    "holm",
    "holm_rejects",
    "judge_answer",
    "mcnemar",
    "mean_interval",
    "minus_round_trip",
    "must_fail_control",
    "net",
    "net_item_scores",
    "net_sweep",
    "normalise",
    "normalize_answer",
    "onesided",
    "paired_cluster_bootstrap",
    "round_trip_floor",
    "rules",
    "turn_minus_round_trip",
]
