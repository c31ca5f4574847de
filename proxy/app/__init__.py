"""The mitmproxy assembly: the harness addon and what it reads of a call as it arrives, its
options and their configuration, the one list of addons every harness proxy loads
(harness_addons), the in-process server, the forward-proxy guard, the control relay.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "addon",
    "addons",
    "arrival",
    "configure",
    "forward_guard",
    "options",
    "relay",
    "server",
    "startup_heap",
]
