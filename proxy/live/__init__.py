"""Live mode: each call pointed at its vendor with the study's key (upstream.py), reserved against
the cap, its reply metered, redacted and settled in the ledger; its setup and the mitmproxy read
coalescing it installs. Loads nothing of stubs/ (tests/proxy/live/test_loads_no_stubs.py).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.live.forwarder import KEY_ENV
    from proxy.live.setup import LiveSetupError, start_live

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "KEY_ENV": "proxy.live.forwarder",
    "LiveSetupError": "proxy.live.setup",
    "start_live": "proxy.live.setup",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "KEY_ENV",
    "LiveSetupError",
    "start_live",
]
