"""The run's lines to the proxy and through it: the proxy's control channel (proxy_control.py), the
round-trip probes (rtt.py), and the routes handed to the arms and the guard (the day's probe
decision, the guard's listener).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.run.control.guard_route import guard_route
from harness.run.control.probe_route import probe_env
from harness.run.control.proxy_control import ProxyControl
from harness.run.control.rtt import live_upstreams, probe_all

__all__ = [
    "ProxyControl",
    "guard_route",
    "live_upstreams",
    "probe_all",
    "probe_env",
]
