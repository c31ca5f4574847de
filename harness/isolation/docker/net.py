"""Host-side pieces of the docker backend: the docker CLI, a network's bridge and gateway,
the owner of a run's resources, and `harness cleanup`.

The firewall rules that confine arms, and the kernel log they write, are in docker_rules.
Every resource of a run carries `harness.run=<id>` (a label, or the rule's comment) and its
owner `<pid>:<start>`, so `harness cleanup` after a crash removes exactly what a dead run left.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from collections.abc import Sequence

from harness.errors import HarnessError
from harness.isolation import docker_rules, pids

RUN_LABEL = "harness.run"
OWNER_LABEL = "harness.owner"


class DockerError(RuntimeError):
    """A docker or iptables command failed; the message has its stderr."""


def docker(args: Sequence[str], timeout: float = 60, check: bool = True) -> str:
    """Run `docker ARGS` and return stdout. The CLI (not the Python SDK) because it is what
    `harness images` already uses and what a user runs to inspect a run by hand; every call is
    one short subprocess, so nothing holds a socket open across the orchestrator's event loop."""
    try:
        proc = subprocess.run(
            ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError as e:
        raise DockerError("the docker command is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise DockerError(f"`docker {' '.join(args[:3])} ...` did not answer in {timeout}s") from e
    if check and proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise DockerError(f"`docker {' '.join(args[:3])} ...` failed: {detail[0]}")
    return proc.stdout


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


def engine_answers() -> bool:
    try:
        return bool(docker(["version", "--format", "{{.Server.Version}}"], timeout=10).strip())
    except DockerError:
        return False


def owner() -> str:
    """This harness process, as `pid:start` (a reused pid never passes for a live owner)."""
    return f"{os.getpid()}:{pids.start_time(os.getpid())}"


def owner_alive(value: str) -> bool:
    pid, _, start = value.partition(":")
    return pid.isdigit() and pids.start_time(int(pid)) == start


def rule_comment(run_id: str) -> str:
    """The comment on every firewall rule of a run: teardown and cleanup find them by it."""
    return f"{RUN_LABEL}={run_id} owner={owner()}"


def remove_rules(run_id: str) -> int:
    """Delete every iptables and ip6tables rule of `run_id`; returns how many."""
    return docker_rules.remove_where(lambda comment: comment.startswith(f"{RUN_LABEL}={run_id} "))


def cleanup(force: bool = False) -> list[str]:
    """Remove the containers, networks and iptables rules of runs whose harness is gone."""
    done: list[str] = []
    if engine_answers():
        fmt = f'{{{{.ID}}}} {{{{.Label "{RUN_LABEL}"}}}} {{{{.Label "{OWNER_LABEL}"}}}}'
        for kind in ("container", "network"):
            every = ["-a"] if kind == "container" else []
            listing = docker(
                [kind, "ls", *every, "--filter", f"label={RUN_LABEL}", "--format", fmt]
            )
            # Containers first (a network in use cannot be removed).
            for line in listing.splitlines():
                ident, run, who = [*line.split(), "", "", ""][:3]
                if owner_alive(who) and not force:
                    done.append(f"{run}: still running ({kind} {ident} kept)")
                    continue
                remove = ["rm", "-f", ident] if kind == "container" else ["rm", ident]
                with contextlib.suppress(DockerError):
                    docker([kind, *remove], timeout=60)
                    done.append(f"{run}: removed {kind} {ident}")

    def stale(comment: str) -> bool:
        who = comment.rpartition("owner=")[2]
        return comment.startswith(f"{RUN_LABEL}=") and (force or not owner_alive(who))

    removed = docker_rules.remove_where(stale)
    if removed:
        done.append(f"removed {removed} iptables/ip6tables rule(s) of crashed runs")
    return done


def require_engine() -> None:
    if not engine_answers():
        raise HarnessError(
            "--isolation docker: no Docker engine answers",
            hint="run scripts/ensure-docker (as root), or use --isolation local",
        )
