"""`python -m proxy CONFIG.json`: the run's proxy, one listener per arm.

proxy/app/server.py serves one listener; a study needs one per arm so the proxy attributes each call
by the port it arrived on (`harness_arm_ports`), plus the control endpoint (proxy/flow/control.py).
It runs in its own process so mitmproxy's event loop, signal handling and imports stay out of the
orchestrator, as a proxy container would with the docker backend.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from mitmproxy import ctx

from proxy.app import (
    BASE_OPTIONS,
    NOWHERE,
    FreezeStartupHeap,
    HarnessChain,
    harness_addons,
    reverse_master,
    start_relay,
)
from rundir.control import PROXY_READY, ProxyFile, ProxySettingsError
from rundir.logs import configure_logging


class _Ready:
    def running(self) -> None:
        # An addon's `running` that failed (a listener's port taken, e.g. the stream server's)
        # is only logged; mitmproxy's errorcheck exits just after this hook. Not ready, then:
        # the backend must see the exit (and retry on a taken port), not a proxy about to go.
        check = ctx.master.addons.get("errorcheck")
        if getattr(getattr(check, "logger", None), "has_errored", None):
            return
        print(PROXY_READY, flush=True)


def listen_modes(config: ProxyFile) -> list[str]:
    """mitmproxy's `mode` specs: per arm a reverse listener, and a regular (forward-proxy) one
    for engines that hard-code vendor hosts and come in through HTTPS_PROXY; mitmproxy
    intercepts their TLS with the harness CA in `confdir`. Both attribute by port."""
    hosts = config.arm_hosts
    modes = [
        f"reverse:{NOWHERE}@{hosts.get(a, '127.0.0.1')}:{p}" for a, p in config.arm_ports.items()
    ]
    modes += [
        f"regular@{hosts.get(a, '127.0.0.1')}:{p}" for a, p in config.https_proxy_ports.items()
    ]
    return modes


async def serve(config: ProxyFile) -> None:
    proxy_master = reverse_master(listen_modes(config), "127.0.0.1")
    proxy_master.addons.add(HarnessChain(harness_addons(), (FreezeStartupHeap(), _Ready())))
    proxy_master.options.update(**BASE_OPTIONS, **config.options())
    relay = config.control_relay  # docker: the host reaches the control port this way
    relays = [await start_relay(relay.host, relay.port, config.control_port)] if relay else []
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, proxy_master.shutdown)
    await proxy_master.run()
    for server in relays:
        server.close()


def main() -> None:
    try:
        config = ProxyFile.read(Path(sys.argv[1]))
    except (IndexError, ProxySettingsError) as e:
        why = e if isinstance(e, ProxySettingsError) else "usage: python -m proxy PROXY.json"
        print(f"harness proxy failed: {why}", file=sys.stderr, flush=True)
        sys.exit(1)
    configure_logging(level=config.log_level, json=True)
    try:
        asyncio.run(serve(config))
    except Exception as e:  # an OptionsError etc.: say it on stderr, which the harness keeps
        print(f"harness proxy failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
