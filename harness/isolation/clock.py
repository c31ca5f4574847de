"""Pinning an arm's wall clock with libfaketime, shared by the local and docker backends.

Each arm reads its offset from the real clock ("+N.NNNNNN" seconds, to the microsecond) in a
timestamp file that `pin_clock` rewrites when an item or a history session starts, so the arm sees
that date exactly, with time passing normally from there. libfaketime has three ways to follow
such a file; bench/faketime_bench.py measured them (BENCHMARKS.md, "Clock pinning"). Re-reading it
on every wall-clock call (`FAKETIME_NO_CACHE=1`, what the backends set) costs a few microseconds
per call (a loop doing nothing but clock calls ran 4 to 6 times slower); monotonic clocks and
sleeps stay real and are not affected. Any cache is worse where it counts: libfaketime 0.9.10
re-reads a cached file only once the real clock's whole second has moved past its last read, so
each pin had to wait for the next real second (`FAKETIME_CACHE_DURATION=0`: half a second on
average). A LongMemEval history pins the clock once per session (~50 an item): those waits were
41 of the 55 s an item took (issue 37); bench/t1_bench.py measures both.

With no cache, the write itself is the pin: the file is replaced atomically, so each clock call
reads either the old offset or the new one, and every call after `pin_clock` returns reads the
new one. Nothing waits.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog
from filelock import FileLock

log = structlog.get_logger("harness.isolation.clock")
REPO = Path(__file__).resolve().parents[2]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# The environment both backends give an arm under libfaketime (plus LD_PRELOAD and
# FAKETIME_TIMESTAMP_FILE, which differ).
FAKETIME_ENV = {
    # Re-read the timestamp file on every wall-clock call: a pin is in force once written.
    "FAKETIME_NO_CACHE": "1",
    # Both spellings (old and new libfaketime): monotonic timers and sleeps stay real, so
    # deadlines and latencies are not distorted.
    "DONT_FAKE_MONOTONIC": "1",
    "FAKETIME_DONT_FAKE_MONOTONIC": "1",
}
# What run.json's `clock_pin` says of a libfaketime pin.
PIN_METHOD = (
    "libfaketime: an offset file to the microsecond, re-read on every wall-clock call "
    "(FAKETIME_NO_CACHE=1), rewritten at each item and history session; no wait"
)
SEAM_ONLY = "seam-only: the item's and each session's date passed on the seam; wall clock real"


def offset_line(clock: datetime, now: float) -> tuple[float, str]:
    """The offset from the real clock `now` to the item's `clock`, and the file's line for it,
    to the microsecond (libfaketime reads a fractional offset): the arm's first clock call
    after the write sees `clock` plus the time since `now`, never a time before it. A naive
    clock is UTC."""
    pinned = clock if clock.tzinfo else clock.replace(tzinfo=UTC)
    # Whole microseconds, rounded up (the file's line holds six decimals): the date's exactly
    # (integer arithmetic), less the real time rounded down.
    pinned_us = (pinned - EPOCH) // timedelta(microseconds=1)
    offset = (pinned_us - math.floor(now * 1_000_000)) / 1_000_000
    return offset, f"{offset:+.6f}\n"


def preload(libfaketime: str) -> str:
    """LD_PRELOAD for a local arm: images/arm/sleepfix.so before libfaketime when it can be
    built. libfaketime 0.9.10 with DONT_FAKE_MONOTONIC turns Python 3.11's time.sleep() into
    EINVAL (wolfcw/libfaketime#426); sleepfix sends monotonic sleeps straight to the kernel, as
    the arm image does. Without a C compiler (or outside a checkout) libfaketime alone, with a
    warning: an arm that calls time.sleep() then fails."""
    source = REPO / "images" / "arm" / "sleepfix.c"
    if not source.is_file():
        return _alone(libfaketime, f"{source} is not there (not a checkout)")
    from harness.errors import HarnessError
    from harness.isolation.sleepfix import compile_sleepfix

    cache = REPO / ".cache"
    try:
        cache.mkdir(exist_ok=True)
        # One compiler at a time: a run that found the file half-written would preload it.
        with FileLock(str(cache / "sleepfix.lock")):
            fix = compile_sleepfix(REPO, cache)
    except (HarnessError, OSError) as e:
        return _alone(libfaketime, str(e))
    return f"{fix}:{libfaketime}"


def _alone(libfaketime: str, why: str) -> str:
    log.warning(
        "libfaketime without sleepfix: time.sleep() in an arm raises EINVAL",
        why=why,
        hint="apt-get install gcc, or HARNESS_FAKETIME=0 to pin clocks on the seam only",
    )
    return libfaketime
