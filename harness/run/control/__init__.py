"""The run's lines to the proxy and through it: the proxy's control channel (proxy_control.py), the
round-trip probes (rtt.py), and the routes handed to the arms and the guard (the day's probe
decision, the guard's listener).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from harness.run.control.guard_route import guard_route

if TYPE_CHECKING:
    from harness.run.control.probe_route import probe_env
    from harness.run.control.proxy_control import ProxyControl
    from harness.run.control.rtt import live_upstreams, probe_all

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ProxyControl": "harness.run.control.proxy_control",
    "live_upstreams": "harness.run.control.rtt",
    "probe_all": "harness.run.control.rtt",
    "probe_env": "harness.run.control.probe_route",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "ProxyControl",
    "guard_route",
    "live_upstreams",
    "probe_all",
    "probe_env",
]
