"""The docker backend's record of refused packets: the kernel log followed from the run's start
(kmsg_follow.py, a process of its own) and the firewall's counters that check it.

`start` runs before the first rule exists, so no refusal of the run predates the follower.
`entries` gives the refusals logged since the last look (through the run's EgressBook, each
line once). At the end, `dropped` compares each arm's LOG-rule packet counters with the kernel
lines read for it: a positive difference is evidence the kernel log lost (a burst that
outran the follower), said in run.json (`egress_dropped`) and the run's summary; the same for
the DNS refuser, whose queries the rule letting them through counts.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path

from harness.isolation import firewall
from harness.isolation.egress_book import EgressBook, attempts
from harness.isolation.kmsg_follow import READY
from rundir.instances import instance_of

FILE = "kernel.log"  # in the run's logs/: the follower's lines, kept as evidence
START_TIMEOUT_S = 10.0
SETTLE_S = 0.3  # the follower is caught up once its file has not grown for this long
DRAIN_MAX_S = 3.0


class KernelLogError(RuntimeError):
    """The kernel log cannot be followed (no /dev/kmsg, no permission)."""


class KernelLog:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / "logs" / FILE
        self.process: subprocess.Popen[str] | None = None

    def start(self, run_id: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        argv = [sys.executable, "-m", "harness.isolation.kmsg_follow"]
        self.process = subprocess.Popen(
            [*argv, firewall.run_tag(run_id), str(self.path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # Ctrl-C reaches the harness, which stops it in order
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()  # READY, or nothing if it died
        if line != READY:
            self.process.wait(START_TIMEOUT_S)
            error = (self.process.stderr.read() if self.process.stderr else "").strip()
            self.process = None
            last = error.splitlines()[-1:] or ["no output"]
            raise KernelLogError(f"cannot follow the kernel log (/dev/kmsg): {last[0]}")

    def entries(self, book: EgressBook, prefixes: dict[str, str]) -> list[dict[str, object]]:
        lines = [x for x in book.tail(self.path).lines() if not x.startswith("#")]
        return firewall.kernel_attempts(prefixes, lines)

    def drain(self) -> None:
        """Wait (at most DRAIN_MAX_S) until the follower has written what the kernel logged."""
        deadline, size, still_since = time.monotonic() + DRAIN_MAX_S, -1, time.monotonic()
        while time.monotonic() < deadline:
            now = self.path.stat().st_size if self.path.exists() else 0
            if now != size:
                size, still_since = now, time.monotonic()
            elif time.monotonic() - still_since >= SETTLE_S:
                return
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        self.process = None


def dropped(
    counts: dict[str, int],
    owners: dict[str, str],
    entries: list[dict[str, object]],
    source: str = "kernel",
) -> dict[str, int]:
    """arm -> packets the firewall counted (`counts`: {key: packets}, `owners`: {key: arm}, the
    key a LOG rule's prefix or, for DNS, an arm's bridge) beyond the entries of `source`
    egress.jsonl holds for it."""
    logged: dict[str, int] = {}
    for entry in entries:
        if entry.get("source") == source:
            arm = instance_of(entry)  # the owners name instances (`A@k`), as the rules do
            logged[arm] = logged.get(arm, 0) + attempts(entry)
    counted: dict[str, int] = {}
    for key, packets in counts.items():
        owner = owners.get(key)
        if owner is not None:
            counted[owner] = counted.get(owner, 0) + packets
    return {
        arm: packets - logged.get(arm, 0)
        for arm, packets in sorted(counted.items())
        if packets > logged.get(arm, 0)
    }


def all_dropped(*found: dict[str, int]) -> dict[str, int]:
    """The sum per arm of several `dropped` results (the kernel log's, the DNS refuser's)."""
    total: dict[str, int] = {}
    for one in found:
        for arm, missing in one.items():
            total[arm] = total.get(arm, 0) + missing
    return total
