"""The proxy's container: the script it runs (the proxy and, beside it, the arms' DNS refuser,
once its config exists), its `docker run` arguments, and its config, whose listeners bind to the
addresses Docker gave it on each arm's network."""

from __future__ import annotations

import os
from pathlib import Path

from harness.isolation import egress
from harness.isolation.base import SECRET_SUFFIXES, ProxySettings
from harness.isolation.dns_refuser import DNS_PORT
from harness.isolation.docker.mounts import identity_mounts, source_mounts
from harness.isolation.docker.security import hardening
from harness.isolation.proxy_ca import VENDOR_CERT_FILE, ca_dir
from rundir.control import ControlRelay, ProxyFile

PROXY_IMAGE = "harness-proxy"
CONTROL_PORT = 8090  # proxy_main's control endpoint, on the proxy container's loopback
RELAY_PORT = 8091  # the relay to it, on the proxy's control-network address
FIRST_ARM_PORT = 8100
FIRST_HTTPS_PROXY_PORT = 8200  # each arm's forward-proxy listener (HTTPS_PROXY)
CA_STORE = "/harness/ca-store"  # the harness CA's folder, in the proxy container only


def proxy_script(config_path: Path, log_path: Path) -> str:
    """The proxy waits for its config: its listeners bind to addresses Docker assigns only once
    the container is attached to every arm network. Beside it, the arms' DNS server
    (dns_refuser: every lookup refused and named)."""
    return (
        f"while [ ! -e {config_path} ]; do sleep 0.1; done; "
        f"python -m harness.isolation.dns_refuser {config_path} >>{log_path} 2>&1 & "
        f"exec python -m proxy {config_path} >>{log_path} 2>&1"
    )


def proxy_run_args(
    name: str, network: str, labels: list[str], settings: ProxySettings, pinned: list[str]
) -> list[str]:
    """`docker run`'s arguments up to the image: `pinned` are the vendor addresses the proxy's
    rule lets it reach (proxy_rules.confine)."""
    # Passed by name, so values never hit a command line; live mode only (record and replay
    # never forward, so they need no key).
    secrets = [k for k in os.environ if k.endswith(SECRET_SUFFIXES)]
    secrets = secrets if settings.mode == "live" else []
    return [
        "run", "-d", "--name", name, "--network", network, *labels, *hardening([]),
        # DNS on port 53 with no capability: only this container's network namespace.
        "--sysctl", f"net.ipv4.ip_unprivileged_port_start={DNS_PORT}",
        *source_mounts(), *identity_mounts(settings),
        "-v", f"{ca_dir()}:{CA_STORE}:ro",
        "-e", "PYTHONPATH=/harness/src", "-e", "PYTHONUNBUFFERED=1", *pinned,
        *[a for k in secrets for a in ("-e", k)],
    ]  # fmt: skip


def listener_ports(arms: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Each arm's proxy listener and HTTPS_PROXY listener (the same ports on every arm
    network: each listener binds the proxy's address on its arm's network only)."""
    arm_ports = {arm: FIRST_ARM_PORT + i for i, arm in enumerate(arms)}
    https_ports = {arm: FIRST_HTTPS_PROXY_PORT + i for i, arm in enumerate(arms)}
    return arm_ports, https_ports


def proxy_file(
    settings: ProxySettings,
    run_dir: Path,
    arm_hosts: dict[str, str],
    ports: tuple[dict[str, int], dict[str, int]],
    control_ip: str,
) -> ProxyFile:
    """The proxy's config: `arm_hosts` its address on each arm's network, `ports` the arms'
    listeners (listener_ports), `control_ip` its address on the control network."""
    arm_ports, https_ports = ports
    return ProxyFile(
        settings=settings,
        arm_ports=arm_ports,
        arm_hosts=arm_hosts,
        https_proxy_ports=https_ports,
        control_port=CONTROL_PORT,
        control_relay=ControlRelay(host=control_ip, port=RELAY_PORT),
        confdir=CA_STORE,
        vendor_cert=f"{CA_STORE}/{VENDOR_CERT_FILE}",
        ca_bundle=settings.upstream_ca(),
        # The proxy's refusals of non-vendor hosts, merged into egress.jsonl with the rest.
        egress_log=str(egress.proxy_log(run_dir)),
        dns={"log": str(egress.proxy_log(run_dir).with_name("dns.jsonl"))},
    )
