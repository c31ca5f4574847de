"""The run's lines to the proxy and through it: the routes handed to the arms and the guard (the
day's probe decision, the guard's listener), where the proxy's control channel and the
round-trip probes will join them.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "guard_route",
    "probe_route",
]
