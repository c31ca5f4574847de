"""What a running turn is watched for: its arm still alive, every refused (stray) connection as it
is seen and charged, the strays by arm and destination at the end, and the model each main call
was served by.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.run.watch.model_identity import ModelIdentityWatch
from harness.run.watch.stray_watch import StrayConnection, StrayWatch, strongest
from harness.run.watch.strays import Key, at_teardown, by_destination, summary_lines
from harness.run.watch.turn_watch import TurnWatch

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
