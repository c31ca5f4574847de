"""`python -m proxy CONFIG.json`: the run's proxy, one listener per arm.

proxy/server.py serves one listener; a study needs one per arm so the proxy attributes each call
by the port it arrived on (`harness_arm_ports`), plus the control endpoint (proxy/control.py).
It runs in its own process so mitmproxy's event loop, signal handling and imports stay out of the
orchestrator, as a proxy container would with the docker backend.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from harness.isolation.base import PROXY_READY
from harness.isolation.proxy_ca import VENDOR_CERT_FILE
from harness.logging import configure_logging
from proxy.addon import HarnessAddon
from proxy.control import HarnessControl
from proxy.forward_guard import VendorHostsOnly
from proxy.relay import start_relay
from proxy.server import BASE_OPTIONS, NOWHERE, reverse_master


class _Ready:
    def running(self) -> None:
        print(PROXY_READY, flush=True)


async def serve(config: dict[str, Any]) -> None:
    ports: dict[str, int] = config["arm_ports"]
    # The docker backend binds each arm's listener to the proxy's address on that arm's network
    # only, so one arm cannot reach (and be attributed as) another arm's listener.
    hosts: dict[str, str] = config.get("arm_hosts", {})
    modes = [f"reverse:{NOWHERE}@{hosts.get(arm, '127.0.0.1')}:{p}" for arm, p in ports.items()]
    # A second listener per arm in regular (forward-proxy) mode, for engines that hard-code vendor
    # hosts and come in through HTTPS_PROXY; mitmproxy intercepts their TLS with the harness CA
    # in `confdir` (harness/isolation/proxy_ca.py). Attributed by port like the first.
    https_ports: dict[str, int] = config.get("https_proxy_ports", {})
    modes += [f"regular@{hosts.get(arm, '127.0.0.1')}:{p}" for arm, p in https_ports.items()]
    listeners = [*ports.items(), *https_ports.items()]
    proxy_master = reverse_master(modes, "127.0.0.1")
    proxy_master.addons.add(HarnessControl(), HarnessAddon(), VendorHostsOnly(), _Ready())
    updates: dict[str, Any] = {
        **BASE_OPTIONS,
        "harness_control_port": config["control_port"],
        "harness_arm_ports": [f"{port}={arm}" for arm, port in listeners],
        **config["options"],
    }
    if config.get("confdir"):
        # The harness CA (harness/isolation/proxy_ca.py), and the vendor-host certificate it
        # signed, served for every intercepted host: dated so that arms with a pinned clock accept
        # it.
        updates["confdir"] = config["confdir"]
        updates["certs"] = [f"*={Path(config['confdir']) / VENDOR_CERT_FILE}"]
    if config.get("ca_bundle"):
        # Trust this CA for the vendors' TLS too (ProxySettings.ca_bundle).
        updates["ssl_verify_upstream_trusted_ca"] = config["ca_bundle"]
    proxy_master.options.update(**updates)
    relay = config.get("control_relay")  # docker: the host reaches the control port this way
    relays = (
        [await start_relay(relay["host"], relay["port"], config["control_port"])] if relay else []
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, proxy_master.shutdown)
    await proxy_master.run()
    for server in relays:
        server.close()


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    configure_logging(level=config.get("log_level", "warning"), json=True)
    try:
        asyncio.run(serve(config))
    except Exception as e:  # an OptionsError etc.: say it on stderr, which the harness keeps
        print(f"harness proxy failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
