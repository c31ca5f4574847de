"""The checks a finished run is put through: the determinism gate, the audit (audit/, a part of
its own: one module per group of checks), the replay comparison, the memory controls and the
canary scan. They read runs (rundir/) and never run arms."""

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
