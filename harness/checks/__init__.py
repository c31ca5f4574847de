"""The checks a finished run is put through: the determinism gate, the audit (audit/, a part of
its own: one module per group of checks), the replay comparison, the memory controls and the
canary scan. They read runs (rundir/) and never run arms."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.checks import memory_controls
    from harness.checks.arm_verdict import (
        DEFAULT_MAX_FAILURE_RATE,
        KNOWN_OUTCOMES,
        arm_failures,
        failure_text,
        ordered,
        outcome_summary,
        per_arm,
    )
    from harness.checks.body_diff import diff_block
    from harness.checks.gate import compare_runs
    from harness.checks.masks import EXCLUDED_HEADERS, all_masks, proxy_masks
    from harness.checks.memory_controls import misses_per_arm, strings_of
    from harness.checks.pair_gate import check_pair
    from harness.checks.pinning import pinning_difference
    from harness.checks.replay_compare import compare_replay, verdict_lines, write_comparison
    from harness.checks.scan import Canary, ForgetWord, ScanResult, load_entries, scan_run

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "Canary": "harness.checks.scan",
    "DEFAULT_MAX_FAILURE_RATE": "harness.checks.arm_verdict",
    "EXCLUDED_HEADERS": "harness.checks.masks",
    "ForgetWord": "harness.checks.scan",
    "KNOWN_OUTCOMES": "harness.checks.arm_verdict",
    "ScanResult": "harness.checks.scan",
    "all_masks": "harness.checks.masks",
    "arm_failures": "harness.checks.arm_verdict",
    "check_pair": "harness.checks.pair_gate",
    "compare_replay": "harness.checks.replay_compare",
    "compare_runs": "harness.checks.gate",
    "diff_block": "harness.checks.body_diff",
    "failure_text": "harness.checks.arm_verdict",
    "load_entries": "harness.checks.scan",
    "misses_per_arm": "harness.checks.memory_controls",
    "ordered": "harness.checks.arm_verdict",
    "outcome_summary": "harness.checks.arm_verdict",
    "per_arm": "harness.checks.arm_verdict",
    "pinning_difference": "harness.checks.pinning",
    "proxy_masks": "harness.checks.masks",
    "scan_run": "harness.checks.scan",
    "strings_of": "harness.checks.memory_controls",
    "verdict_lines": "harness.checks.replay_compare",
    "write_comparison": "harness.checks.replay_compare",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DEFAULT_MAX_FAILURE_RATE",
    "EXCLUDED_HEADERS",
    "KNOWN_OUTCOMES",
    "Canary",
    "ForgetWord",
    "ScanResult",
    "all_masks",
    "arm_failures",
    "check_pair",
    "compare_replay",
    "compare_runs",
    "diff_block",
    "failure_text",
    "load_entries",
    "memory_controls",
    "misses_per_arm",
    "ordered",
    "outcome_summary",
    "per_arm",
    "pinning_difference",
    "proxy_masks",
    "scan_run",
    "strings_of",
    "verdict_lines",
    "write_comparison",
]
