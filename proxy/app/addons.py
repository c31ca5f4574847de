"""The harness's addons, in the order every harness proxy loads them: `python -m proxy`
(proxy/__main__.py), `harness proxy serve` (proxy/app/server.py) and the tests' kit alike.

The control endpoint comes first: HarnessAddon reads the arms' turns from its board (its
`running` hook). The forward-proxy guard refuses hosts that are not vendors' (HTTPS_PROXY
listeners only). What a process adds around them (its readiness line, the startup heap freeze)
is the process's own.
"""

from __future__ import annotations

from typing import Any

from proxy.app.addon import HarnessAddon
from proxy.app.forward_guard import VendorHostsOnly
from proxy.flow.control import HarnessControl


def harness_addons() -> list[Any]:
    return [HarnessControl(), HarnessAddon(), VendorHostsOnly()]
