"""`python -m harness.isolation.kmsg_follow TAG OUT`: follow the kernel log while a run goes on and
append every line of the run's firewall rules (`harness TAG ...`, firewall.log_prefix) to OUT.

Why a follower, not `dmesg` at the end: the kernel's ring holds about 128 KiB (some 450 of these
lines), so an arm that sends a burst of refused packets overwrote the record of its first,
real attempt before anyone read it. Reading /dev/kmsg from the moment the run starts (seeked to
its end: nothing older is the run's) takes each line as the kernel writes it; a separate process
(not a thread of the harness, which shares one interpreter lock with the run) keeps up with a
burst of thousands of lines a second. A line the ring lost before it was read makes read()
fail with EPIPE; the follower counts those and carries on (the firewall's own packet counters,
read at the end, say how many refusals are missing: firewall.rule_counts).

Each output line is `<wall time ISO> <kernel message>`, written with one O_APPEND write, so a
reader never sees half a line. The first line on stdout, `following`, says it has the log open.
It exits when its parent (the harness) is gone or on SIGTERM.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from datetime import UTC, datetime

READY = "following"


def _boot_wall() -> float:
    """Wall time of the kernel log's clock zero (its timestamps count from boot)."""
    return time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)


def parse(record: bytes) -> tuple[int, float, str] | None:
    """(sequence number, seconds since boot, message) of one /dev/kmsg record."""
    head, _, message = record.partition(b";")
    fields = head.split(b",")
    if len(fields) < 3:
        return None
    try:
        return (
            int(fields[1]),
            int(fields[2]) / 1e6,
            message.split(b"\n", 1)[0].decode(errors="replace"),
        )
    except ValueError:
        return None


def follow(tag: str, out: str) -> None:
    wanted = f"harness {tag} "
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(fd, 0, os.SEEK_END)  # only what the kernel logs from now on
    target = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    parent, boot = os.getppid(), _boot_wall()
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
    last, lost = -1, 0
    print(READY, flush=True)
    while not stop and os.getppid() == parent:
        ready, _, _ = select.select([fd], [], [], 0.5)
        while ready:
            try:
                record = os.read(fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:  # the ring overwrote records before they were read
                continue
            parsed = parse(record)
            if parsed is None:
                continue
            seq, since_boot, message = parsed
            lost += max(0, seq - last - 1) if last >= 0 else 0  # any record, the run's or not
            last = seq
            if message.startswith(wanted):
                when = datetime.fromtimestamp(boot + since_boot, UTC)
                line = f"{when.isoformat(timespec='microseconds')} {message}\n"
                os.write(target, line.encode())
    if lost:  # kept as a comment line: readers skip it, a person sees it
        os.write(target, f"# the kernel log lost {lost} record(s) before they were read\n".encode())


def main() -> None:
    follow(sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()
