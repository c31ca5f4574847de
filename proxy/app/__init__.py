"""The mitmproxy assembly: the harness addon and what it reads of a call as it arrives, its
options and their configuration, the one list of addons every harness proxy loads
(harness_addons), the in-process server, the forward-proxy guard, the control relay.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from proxy.app.addons import HarnessChain, harness_addons
from proxy.app.relay import start_relay
from proxy.app.server import BASE_OPTIONS, NOWHERE, reverse_master, serve
from proxy.app.startup_heap import FreezeStartupHeap

__all__ = [
    "BASE_OPTIONS",
    "NOWHERE",
    "FreezeStartupHeap",
    "HarnessChain",
    "harness_addons",
    "reverse_master",
    "serve",
    "start_relay",
]
