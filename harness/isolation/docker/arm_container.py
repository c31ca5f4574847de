"""An arm's container: its environment (its listeners on the proxy, placeholder keys, its socket
guard, its pinned clock), the host folders it mounts (its own only, so no arm can write what the
harness reads as another's), its log read back as the arm wrote it, and its start awaited.

Every container starts with no capabilities (a study gives some back: `cap_add`), no privilege
gain and IPv6 off (security.py). Each arm mounts only its own folders: its guard log
(`egress/<arm>/`), its log (`logs/<arm>/`), its clock (read-only), and a resolv.conf naming the
DNS refuser on the proxy (dns_refuser), so no arm can write what the harness reads as another's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arms.server import parse_ready_line
from harness.isolation import egress
from harness.isolation.base import InfraError
from harness.isolation.clock import FAKETIME_ENV
from harness.isolation.docker.clock import faketime_preload
from harness.isolation.docker.names import host_name
from harness.isolation.proxy_ca import proxy_env
from harness.isolation.sdk_env import sdk_env
from harness.isolation.seam_http import seam_client
from harness.study import ArmSpec

GUARD_DIR = Path(__file__).parents[1] / "guard"
ARM_IMAGE = "harness-arm"
SEAM_PORT = 8700
ARM_CA_CERT = "/harness/ca/harness-ca.pem"  # the harness CA's public certificate, in every arm


def arm_env(
    name: str, spec: ArmSpec, image: str, run_id: str, proxy_ip: str, ports: tuple[int, int]
) -> dict[str, str]:
    """The environment of arm `name` (or a worker's copy of it): `ports` are its listener and
    its HTTPS_PROXY listener on the proxy's address `proxy_ip`, all its guard lets it reach."""
    proxy_port, https_port = ports
    env = {"TZ": "UTC", "PYTHONUNBUFFERED": "1", **spec.env}
    # Set after the spec's env so a compose file's own URLs cannot point elsewhere.
    env |= sdk_env(proxy_ip, proxy_port)
    env |= proxy_env(f"http://{proxy_ip}:{https_port}", ARM_CA_CERT, proxy_ip)
    return env | {
        "SEAM_HOST": "0.0.0.0",
        "SEAM_PORT": str(SEAM_PORT),
        "HARNESS_ARM": host_name(name),  # the study's arm, whichever worker's copy
        "HARNESS_RUN": run_id,
        "HARNESS_GUARD_ARM": name,
        "HARNESS_GUARD_ALLOW": f"{proxy_ip}:{proxy_port},{proxy_ip}:{https_port}",
        "HARNESS_EGRESS_LOG": "/harness/egress/egress.jsonl",
        "PYTHONPATH": "/harness/guard:/harness/src",
        # An image not built FROM harness-arm has no libfaketime: its clock then reaches
        # it on the seam only.
        "LD_PRELOAD": faketime_preload(image),
        "FAKETIME_TIMESTAMP_FILE": "/harness/clock/faketime",
        **FAKETIME_ENV,  # the file re-read on every clock call (harness/isolation/clock.py)
    }


@dataclass(frozen=True)
class ArmFolders:
    """The host folders and files one arm's container mounts: its bounded /tmp, its clock
    (read-only), its resolv.conf naming the DNS refuser, the CA's certificate, its guard log's
    folder, its log's folder, and the study's folder as its working directory (read-only)."""

    tmp: Path
    clock: Path
    resolv: Path
    ca: Path
    egress: Path
    logs: Path
    work: Path

    def mounts(self) -> list[str]:
        return [
            "-v", f"{self.tmp}:/tmp",
            "-v", f"{GUARD_DIR}:/harness/guard:ro",
            "-v", f"{self.clock}:/harness/clock:ro",
            "-v", f"{self.resolv}:/etc/resolv.conf:ro",
            "-v", f"{self.ca}:{Path(ARM_CA_CERT).parent}:ro",
            "-v", f"{self.egress}:/harness/egress",
            "-v", f"{self.logs}:/harness/logs",
            "-v", f"{self.work}:{self.work}:ro", "-w", str(self.work),
        ]  # fmt: skip


async def wait_until_serving(
    name: str, url: str, log_path: Path, offset: int, alive: Callable[[], bool], timeout: float
) -> None:
    """Arm `name`'s ready line in its log (after `offset`), then an answer on its seam at
    `url`; InfraError, with the end of its log, if it dies or `timeout` passes first."""
    deadline = time.monotonic() + timeout
    # The ready line first, then the seam: a connection tried before the arm listens can
    # sit unanswered for seconds (SYN retransmits) instead of being refused at once.
    while not any(parse_ready_line(x.strip()) for x in lines_from(log_path, offset)):
        if time.monotonic() > deadline or not await asyncio.to_thread(alive):
            raise InfraError(f"arm {name!r} never said it was ready; {log_tail(log_path)}")
        await asyncio.sleep(0.1)
    async with seam_client(url, timeout=2) as client:
        while True:
            try:
                await client.health()
                return
            except Exception as e:  # not up yet: any error until the deadline
                if time.monotonic() > deadline or not alive():
                    raise InfraError(
                        f"arm {name!r} did not answer on its seam ({e}); {log_tail(log_path)}"
                    ) from e
                await asyncio.sleep(0.2)


def log_tail(log_path: Path) -> str:
    text = "\n".join(lines_from(log_path, 0))[-2000:]
    return f"its log {log_path}:\n{text}"


def lines_from(path: Path, offset: int) -> list[str]:
    """The arm's log from `offset`: the arm writes it, so never through a symlink it planted
    and at most egress.READ_MAX bytes."""
    with contextlib.suppress(OSError), open(path, "rb", opener=_no_follow) as f:
        f.seek(offset)
        return f.read(egress.READ_MAX).decode(errors="replace").splitlines()
    return []


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
