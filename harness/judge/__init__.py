import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.judge.audit import judgment_set_findings
    from harness.judge.outcomes import read_outcomes
    from harness.judge.plan import Settings
    from harness.judge.progress import judging_progress
    from harness.judge.stage import StageOptions, run_stage, seal_path_for
    from harness.judge.verify import verify_set

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "Settings": "harness.judge.plan",
    "StageOptions": "harness.judge.stage",
    "judging_progress": "harness.judge.progress",
    "judgment_set_findings": "harness.judge.audit",
    "read_outcomes": "harness.judge.outcomes",
    "run_stage": "harness.judge.stage",
    "seal_path_for": "harness.judge.stage",
    "verify_set": "harness.judge.verify",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


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
