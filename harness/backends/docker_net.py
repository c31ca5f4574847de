"""Host-side pieces of the docker backend: the docker CLI, iptables rules, the kernel log, cleanup.

Why iptables at all: Docker's `--internal` flag stops forwarding out of a network, but a
container still reaches the host itself through its bridge's gateway address (the host's INPUT
chain), and a guard inside the arm covers Python code only. So every arm subnet gets rules of its
own, in INPUT (the host) and DOCKER-USER (forwarded traffic: other networks, other arms): a
new connection from the arm's subnet to anything but the proxy's address on that network is
LOGged with a prefix naming the run and the arm, then REJECTed (the arm sees "connection
refused" at once instead of hanging until its timeout). Replies on connections the host opened
(the orchestrator calling the arm's seam) are not new and pass.

Every rule carries an iptables comment `harness.run=<id> owner=<pid>:<start>` so teardown, and
`harness cleanup` after a crash, find exactly the rules a run added.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from harness.backends import pids
from harness.errors import HarnessError

RUN_LABEL = "harness.run"
OWNER_LABEL = "harness.owner"
CHAINS = ("INPUT", "DOCKER-USER")
# iptables --log-prefix takes at most 29 characters.
_PREFIX_MAX = 29
_KERNEL_LINE = re.compile(r"^(?P<time>\S+)\s+(?P<prefix>harness \S+ \S+) (?P<rest>.*)$")


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
    options = info.get("Options") or {}
    bridge = options.get("com.docker.network.bridge.name") or f"br-{str(info.get('Id', ''))[:12]}"
    address = interface_ipv4(bridge)
    if address is None:
        raise DockerError(
            f"network {network} names no gateway and its bridge {bridge} has no IPv4 address"
        )
    return address


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


def log_prefix(run_id: str, arm: str, index: int) -> str:
    """`harness <run hash> <arm> `: the run's id is too long for the 29-character limit, so a
    short hash of it; an arm name that does not fit becomes `armN` (its index)."""
    tag = hashlib.sha256(run_id.encode()).hexdigest()[:6]
    prefix = f"harness {tag} {arm} "
    return prefix if len(prefix) <= _PREFIX_MAX else f"harness {tag} arm{index} "


@dataclass(frozen=True)
class ArmRules:
    """The rules confining one arm's subnet: all its new connections but to the proxy."""

    run_id: str
    subnet: str
    proxy_ip: str
    prefix: str

    def specs(self) -> list[tuple[str, list[str]]]:
        comment = ["-m", "comment", "--comment", f"{RUN_LABEL}={self.run_id} owner={owner()}"]
        new = ["-m", "conntrack", "--ctstate", "NEW"]
        rules: list[tuple[str, list[str]]] = []
        for chain in CHAINS:
            # INPUT is the host itself, never the proxy container: everything new is refused.
            match = ["-s", self.subnet]
            if chain == "DOCKER-USER":
                match += ["!", "-d", self.proxy_ip]
            base = match + new + comment
            # Listed LOG first: inserted at position 1 in reverse, so LOG ends up before REJECT.
            rules.append((chain, [*base, "-j", "LOG", "--log-prefix", self.prefix]))
            rules.append((chain, [*base, "-j", "REJECT"]))
        return rules


def iptables(args: Sequence[str]) -> None:
    try:
        proc = subprocess.run(
            ["iptables", "-w", "10", *args], capture_output=True, text=True, check=False
        )
    except FileNotFoundError as e:
        raise DockerError("iptables is not installed (apt-get install -y iptables)") from e
    if proc.returncode != 0:
        raise DockerError(f"iptables {' '.join(args[:2])} failed: {proc.stderr.strip()}")


def add_rules(rules: ArmRules) -> None:
    for chain, spec in reversed(rules.specs()):
        iptables(["-I", chain, "1", *spec])


def remove_rules(run_id: str) -> int:
    """Delete every rule of `run_id` (by its comment) from both chains; returns how many."""
    return _remove_where(lambda comment: comment.startswith(f"{RUN_LABEL}={run_id} "))


def _remove_where(wanted: object) -> int:
    removed = 0
    for chain in CHAINS:
        try:
            listing = subprocess.run(
                ["iptables", "-w", "10", "-S", chain], capture_output=True, text=True, check=False
            ).stdout
        except FileNotFoundError:
            return 0
        for line in listing.splitlines():
            words = shlex.split(line)
            if words[:2] != ["-A", chain] or "--comment" not in words:
                continue
            comment = words[words.index("--comment") + 1]
            if callable(wanted) and wanted(comment):
                with contextlib.suppress(DockerError):
                    iptables(["-D", *words[1:]])
                    removed += 1
    return removed


def kernel_attempts(prefixes: dict[str, str]) -> list[dict[str, object]]:
    """Refused connections from the kernel log, for the given {log prefix: arm}.

    Each LOG line is one new connection the rules refused; `dmesg --time-format iso` gives its
    wall time. Without permission to read the kernel log this returns nothing (and the guard's
    entries remain), which the run's log says.
    """
    try:
        text = subprocess.run(
            ["dmesg", "--time-format", "iso"], capture_output=True, text=True, check=False
        ).stdout
    except FileNotFoundError:
        return []
    found: list[dict[str, object]] = []
    for line in text.splitlines():
        match = _KERNEL_LINE.match(line)
        if not match or f"{match['prefix']} " not in prefixes:
            continue
        fields = dict(f.split("=", 1) for f in match["rest"].split() if "=" in f)
        port = fields.get("DPT")
        destination = f"{fields.get('DST', '?')}:{port}" if port else fields.get("DST", "?")
        found.append(
            {
                "schema": 1,
                "arm": prefixes[f"{match['prefix']} "],
                "destination": destination,
                "protocol": fields.get("PROTO", "?").lower(),
                "time": match["time"].replace(",", "."),
                "source": "kernel",
            }
        )
    return found


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

    removed = _remove_where(stale)
    if removed:
        done.append(f"removed {removed} iptables rule(s) of crashed runs")
    return done


def require_engine() -> None:
    if not engine_answers():
        raise HarnessError(
            "--isolation docker: no Docker engine answers",
            hint="run scripts/ensure-docker (as root), or use --isolation local",
        )
