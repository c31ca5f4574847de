"""What a running turn is watched for: its arm still alive, every refused (stray) connection as it
is seen and charged, the strays by arm and destination at the end, and the model each main call
was served by.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "model_identity",
    "stray_watch",
    "strays",
    "turn_watch",
]
