"""The harness's addons, in the order every harness proxy loads them: `python -m proxy`
(proxy/__main__.py), `harness proxy serve` (proxy/app/server.py) and the tests' kit alike.

The control endpoint comes first: HarnessAddon reads the arms' turns from its board (its
`running` hook). The forward-proxy guard refuses hosts that are not vendors' (HTTPS_PROXY
listeners only). What a process adds around them (its readiness line, the startup heap freeze)
is the process's own.

A proxy process loads them as one entry of mitmproxy's addon chain (`HarnessChain`): mitmproxy
hands every hook, and an `update` after each flow hook, to every entry in turn, at the price of a
coroutine, a context manager and two generators per entry (about 1.6 us, measured, with or
without a handler), eight times or more per call. Sub-addons (`addons`, which mitmproxy walks in
order, parent first) cost a step of that walk instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proxy.app.addon import HarnessAddon
from proxy.app.forward_guard import VendorHostsOnly
from proxy.flow import HarnessControl


def harness_addons() -> list[Any]:
    return [HarnessControl(), HarnessAddon(), VendorHostsOnly()]


class HarnessChain:
    """`addons`, then `run_once` (addons with only a `running` hook: a process's readiness line,
    the heap freeze), as one chain entry; the run-once addons leave once every `running` hook
    has run, so no later hook walks them."""

    def __init__(self, addons: Sequence[Any], run_once: Sequence[Any] = ()) -> None:
        self.addons: list[Any] = [*addons, *run_once, _LeaveAfterRunning(self, run_once)]


class _LeaveAfterRunning:
    """Last of the chain's addons: its `running` runs after every other one has."""

    def __init__(self, chain: HarnessChain, leaving: Sequence[Any]) -> None:
        self.chain = chain
        self.leaving = (*leaving, self)

    def running(self) -> None:
        # A new list, not an edit of the one mitmproxy may be walking right now.
        self.chain.addons = [a for a in self.chain.addons if all(a is not b for b in self.leaving)]
