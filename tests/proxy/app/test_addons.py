"""The harness's addons as one entry of mitmproxy's chain (proxy/app/addons.py), in a real
mitmproxy Master: every hook still reaches them in their order, the run-once addons leave after
`running`, and the entry costs the dispatch of one addon, not five."""

from __future__ import annotations

import warnings
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # ldap3 -> pyasn1, via mitmproxy.master
    from mitmproxy import hooks, master, options
    from mitmproxy.proxy.layers.http import HttpRequestHook
    from mitmproxy.test import tflow

from proxy.app.addon import HarnessAddon
from proxy.app.addons import HarnessChain, harness_addons


class Seen:
    """Records every hook it is given, in one shared list."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def running(self) -> None:
        self.log.append(f"{self.name}.running")

    def request(self, flow: Any) -> None:
        self.log.append(f"{self.name}.request")


async def test_hooks_reach_the_addons_in_order_and_the_run_once_ones_leave_after_running() -> None:
    log: list[str] = []
    proxy_master = master.Master(options.Options(), with_termlog=False)
    chain = HarnessChain([Seen("a", log), Seen("b", log)], (Seen("once", log), Seen("ready", log)))
    proxy_master.addons.add(chain)
    await proxy_master.addons.trigger_event(hooks.RunningHook())
    assert log == ["a.running", "b.running", "once.running", "ready.running"]
    log.clear()
    await proxy_master.addons.trigger_event(HttpRequestHook(tflow.tflow()))
    assert log == ["a.request", "b.request"]
    assert [a.name for a in chain.addons] == ["a", "b"]
    assert proxy_master.addons.chain == [chain]  # one entry of mitmproxy's chain


async def test_the_harness_addons_load_their_options_through_the_chain() -> None:
    proxy_master = master.Master(options.Options(), with_termlog=False)
    proxy_master.addons.add(HarnessChain(harness_addons()))
    # Each sub-addon's `load` ran (its options exist) and mitmproxy finds each by name.
    assert "harness_mode" in proxy_master.options
    assert "harness_control_port" in proxy_master.options
    assert "harness_egress_log" in proxy_master.options
    assert isinstance(proxy_master.addons.get("harnessaddon"), HarnessAddon)
    assert proxy_master.addons.get("harnesscontrol") is not None
