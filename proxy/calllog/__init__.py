"""The call log: one record per call (calls.jsonl, bodies/), written through the sink that stops
the proxy forwarding when it cannot write.

Submodules are imported where used (not here), so importing one loads only what it needs."""

from proxy.calllog.sink import CallSink

__all__ = [
    "CallSink",
]
