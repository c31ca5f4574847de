"""The run's modes behind one `Mode` (base.py): record (stubs/), replay (an earlier call log), and
live (proxy/live/ as a Mode); the local stream server that plays their streamed replies.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "base",
    "live",
    "record",
    "replay",
    "stream_server",
]
