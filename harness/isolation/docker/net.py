"""The docker backend's networks on the host: a network's bridge and gateway, a container's
addresses, an image's environment.

The Docker CLI itself is in cli.py; the firewall rules that confine arms in arm_rules.py (and the
shared host firewall in harness/isolation/firewall.py); who owns a run's resources in
harness/isolation/owner.py.
"""

from __future__ import annotations

import json
import re
import subprocess

from harness.isolation.docker.cli import DockerError, docker


def network_gateway(network: str) -> str:
    """The host's IPv4 address on a Docker network (its bridge's gateway).

    A freshly started docker.io 20.10 lists no `Gateway` in the default bridge's IPAM config
    (a long-lived daemon often does), so when IPAM names none the address is read from the
    bridge interface itself: the network's `com.docker.network.bridge.name` option (`docker0`
    for the default bridge), else Docker's own naming for user networks (`br-` + 12 id chars)."""
    out = docker(["network", "inspect", "-f", "{{json .}}", network])
    info = json.loads(out)
    for config in (info.get("IPAM") or {}).get("Config") or []:
        gateway = str(config.get("Gateway") or "")
        if gateway and ":" not in gateway:
            return gateway.split("/")[0]
    bridge = _bridge(info)
    address = interface_ipv4(bridge)
    if address is None:
        raise DockerError(
            f"network {network} names no gateway and its bridge {bridge} has no IPv4 address"
        )
    return address


def network_bridge(network: str) -> str:
    """The host interface of a Docker bridge network: where every frame its containers send
    arrives on the host, whatever addresses the frame claims."""
    return _bridge(json.loads(docker(["network", "inspect", "-f", "{{json .}}", network])))


def _bridge(info: dict[str, object]) -> str:
    options = info.get("Options") or {}
    assert isinstance(options, dict)
    named = options.get("com.docker.network.bridge.name")
    return str(named) if named else f"br-{str(info.get('Id', ''))[:12]}"


def container_addresses(container: str) -> dict[str, str]:
    """network -> the container's IPv4 address on it."""
    out = docker(["inspect", "-f", "{{json .NetworkSettings.Networks}}", container])
    return {net: str(info["IPAddress"]) for net, info in json.loads(out).items()}


def image_env(image: str) -> dict[str, str]:
    """The environment an image sets (its Dockerfile's ENV lines)."""
    out = docker(["image", "inspect", "-f", "{{json .Config.Env}}", image])
    return dict(item.split("=", 1) for item in json.loads(out) or [])


def interface_ipv4(interface: str) -> str | None:
    """The first IPv4 address on a host interface (`ip -4 -o addr show dev IF`), or None."""
    try:
        proc = subprocess.run(
            ["ip", "-4", "-o", "addr", "show", "dev", interface],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"\binet (\d+\.\d+\.\d+\.\d+)/", proc.stdout)
    return match.group(1) if match else None
