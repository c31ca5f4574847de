"""Run mitmproxy with the harness addon in this process (mitmproxy's programmatic API)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

from mitmproxy import master, options
from mitmproxy.addons import (
    core,
    disable_h2c,
    dns_resolver,
    errorcheck,
    next_layer,
    proxyserver,
    tlsconfig,
)

from proxy.app.addons import HarnessChain, harness_addons
from proxy.app.startup_heap import FreezeStartupHeap
from rundir.control import ProxySettings

# Record mode never contacts this address: every call is answered by the addon or replayed by
# its local stream server. Reverse mode still needs a target; this one refuses connections.
NOWHERE = "http://127.0.0.1:9"


class _Ready:
    """Calls `on_ready(host, port)` once the listener is up (mitmproxy's `running` hook)."""

    def __init__(self, on_ready: Callable[[str, int], None]) -> None:
        self.on_ready = on_ready

    def running(self) -> None:
        from mitmproxy import ctx

        addrs = ctx.master.addons.get("proxyserver").listen_addrs()
        host, port = addrs[0][:2]
        self.on_ready(host, port)


# Options every harness proxy sets once its addons have loaded: answer from the addon without
# first dialling the (unused) reverse target, and keep the arm's Host header (it names the vendor
# for engines behind HTTPS_PROXY).
BASE_OPTIONS: dict[str, Any] = {"connection_strategy": "lazy", "keep_host_header": True}


def reverse_master(modes: list[str], listen_host: str) -> master.Master:
    """A mitmproxy Master with only the addons a reverse proxy needs. mitmdump's ~35 default
    addons each see every hook of every flow; dropping the unused ones saves about a millisecond
    of CPU per call."""
    proxy_master = master.Master(
        options.Options(mode=modes, listen_host=listen_host), with_termlog=False
    )
    proxy_master.addons.add(
        core.Core(),
        proxyserver.Proxyserver(),
        next_layer.NextLayer(),
        tlsconfig.TlsConfig(),
        dns_resolver.DnsResolver(),
        disable_h2c.DisableH2C(),
        errorcheck.ErrorCheck(),
    )
    return proxy_master


async def serve(
    settings: ProxySettings, host: str, port: int, on_ready: Callable[[str, int], None]
) -> None:
    """Serve until SIGINT/SIGTERM, then flush the call log."""
    proxy_master = reverse_master([f"reverse:{NOWHERE}@{port}"], host)
    proxy_master.addons.add(HarnessChain(harness_addons(), (FreezeStartupHeap(), _Ready(on_ready))))
    updates: dict[str, Any] = {**BASE_OPTIONS, **settings.addon_options()}
    if settings.ca_bundle:
        # Trust this CA for upstream TLS (a local fake vendor in tests, a corporate CA).
        updates["ssl_verify_upstream_trusted_ca"] = str(settings.ca_bundle)
    proxy_master.options.update(**updates)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, proxy_master.shutdown)
    await proxy_master.run()
