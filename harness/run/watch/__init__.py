"""What a running turn is watched for: its arm still alive, every refused (stray) connection as it
is seen and charged, the strays by arm and destination at the end, and the model each main call
was served by.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

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
