"""The run's lines to the proxy and through it: the proxy's control channel (proxy_control.py), the
round-trip probes (rtt.py), and the routes handed to the arms and the guard (the day's probe
decision, the guard's listener).

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "guard_route",
    "probe_route",
    "proxy_control",
    "rtt",
]
