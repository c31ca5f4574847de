"""The statistics room: intervals, tests, judge-free scorers and controls for study reports.

Pure numpy/scipy; it imports nothing else of the harness, so the report (or anyone holding a
run's `records.jsonl`) can recompute every figure with it.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ABSTENTIONS": "harness.stats.scorers",
    "CallTiming": "harness.stats.latency",
    "Comparison": "harness.stats.controls",
    "ControlResult": "harness.stats.controls",
    "Interval": "harness.stats.bootstrap",
    "Judgement": "harness.stats.scorers",
    "NET_LAMBDAS": "harness.stats.scorers",
    "NetCall": "harness.stats.latency",
    "NetSweep": "harness.stats.scorers",
    "NetTurn": "harness.stats.latency",
    "RouteFloor": "harness.stats.latency",
    "aa_control": "harness.stats.controls",
    "choice_log_loss": "harness.stats.scorers",
    "discordant_pairs": "harness.stats.significance",
    "exact_match": "harness.stats.scorers",
    "floors_from_calls": "harness.stats.latency",
    "holm": "harness.stats.significance",
    "holm_rejects": "harness.stats.significance",
    "judge_answer": "harness.stats.scorers",
    "mcnemar": "harness.stats.significance",
    "mean_interval": "harness.stats.bootstrap",
    "minus_round_trip": "harness.stats.latency",
    "must_fail_control": "harness.stats.controls",
    "net": "harness.stats.scorers",
    "net_item_scores": "harness.stats.scorers",
    "net_sweep": "harness.stats.scorers",
    "normalise": "harness.stats.answer_text",
    "normalize_answer": "harness.stats.scorers",
    "paired_cluster_bootstrap": "harness.stats.bootstrap",
    "round_trip_floor": "harness.stats.latency",
    "turn_minus_round_trip": "harness.stats.latency",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


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
