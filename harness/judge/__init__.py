from harness.judge.audit import judgment_set_findings
from harness.judge.outcomes import read_outcomes
from harness.judge.plan import Settings
from harness.judge.progress import judging_progress
from harness.judge.stage import StageOptions, run_stage, seal_path_for
from harness.judge.verify import verify_set

__all__ = [
    "Settings",
    "StageOptions",
    "judging_progress",
    "judgment_set_findings",
    "read_outcomes",
    "run_stage",
    "seal_path_for",
    "verify_set",
]
