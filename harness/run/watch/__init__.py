"""What a running turn is watched for: its arm still alive, every refused (stray) connection as it
is seen and charged, the strays by arm and destination at the end, and the model each main call
was served by.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run.watch.model_identity import ModelIdentityWatch
    from harness.run.watch.stray_watch import StrayConnection, StrayWatch, strongest
    from harness.run.watch.strays import Key, at_teardown, by_destination, summary_lines
    from harness.run.watch.turn_watch import TurnWatch

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "Key": "harness.run.watch.strays",
    "ModelIdentityWatch": "harness.run.watch.model_identity",
    "StrayConnection": "harness.run.watch.stray_watch",
    "StrayWatch": "harness.run.watch.stray_watch",
    "TurnWatch": "harness.run.watch.turn_watch",
    "at_teardown": "harness.run.watch.strays",
    "by_destination": "harness.run.watch.strays",
    "strongest": "harness.run.watch.stray_watch",
    "summary_lines": "harness.run.watch.strays",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "Key",
    "ModelIdentityWatch",
    "StrayConnection",
    "StrayWatch",
    "TurnWatch",
    "at_teardown",
    "by_destination",
    "strongest",
    "summary_lines",
]
