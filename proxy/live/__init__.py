"""Live mode: each call pointed at its vendor with the study's key (upstream.py), reserved against
the cap, its reply metered, redacted and settled in the ledger; its setup and the mitmproxy read
coalescing it installs. Loads nothing of stubs/ (tests/proxy/live/test_loads_no_stubs.py).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from proxy.live.forwarder import KEY_ENV
from proxy.live.setup import LiveSetupError, start_live

__all__ = [
    "KEY_ENV",
    "LiveSetupError",
    "start_live",
]
