"""The call log: one record per call (calls.jsonl, bodies/), written through the sink that stops
the proxy forwarding when it cannot write.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from proxy.calllog.sink import CallSink

__all__ = [
    "CallSink",
]
