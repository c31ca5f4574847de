"""Pinning an arm's wall clock with libfaketime, shared by the local and docker backends.

Each arm reads its offset from the real clock ("+N" / "-N" seconds) in a timestamp file that
`pin_clock` rewrites when an item starts, so the arm sees the item's date with time passing
normally from there. libfaketime has three ways to follow such a file; bench/faketime_bench.py
measured them (BENCHMARKS.md, "Clock pinning"): re-reading it on every clock call
(`FAKETIME_NO_CACHE=1`) made a loop of time.time(), datetime.now() and os.stat() 4 to 6 times
slower (sys time 5 to 6 times) in two runs; a cache costs about a tenth. libfaketime 0.9.10
re-reads a cached file when the real clock's whole second has moved past its last read, so with
`FAKETIME_CACHE_DURATION=0` an arm can see the old offset until the next real second begins
(measured: at most 0.92 s after the write, always right after a second boundary). `settle`
waits out that window after each write, so no turn ever starts on the previous item's clock:
at most about a second per item and arm, against a slowdown on every clock call.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from pathlib import Path

import structlog
from filelock import FileLock

log = structlog.get_logger("harness.isolation.clock")
REPO = Path(__file__).resolve().parents[2]

# The environment both backends give an arm under libfaketime (plus LD_PRELOAD and
# FAKETIME_TIMESTAMP_FILE, which differ).
FAKETIME_ENV = {
    # Re-read the timestamp file at most once per real second (see `settle`).
    "FAKETIME_CACHE_DURATION": "0",
    # Both spellings (old and new libfaketime): monotonic timers and sleeps stay real, so
    # deadlines and latencies are not distorted.
    "DONT_FAKE_MONOTONIC": "1",
    "FAKETIME_DONT_FAKE_MONOTONIC": "1",
}
# After the next real second begins, a little slack for a clock call that was in flight.
SETTLE_MARGIN_S = 0.03


def offset_line(clock: datetime, now: float) -> tuple[int, str]:
    """The offset from the real clock `now` to the item's `clock`, and the file's line for it.
    Whole seconds (the file's format), rounded up: the arm never sees a time before the item's
    clock, at most one second after it. A naive clock is UTC."""
    pinned = clock if clock.tzinfo else clock.replace(tzinfo=UTC)
    offset = math.ceil(pinned.timestamp() - now)
    return offset, f"{offset:+d}\n"


def settle(written: float) -> None:
    """Wait until every arm's libfaketime must have re-read a timestamp file written at real
    time `written`: its cache holds until the next whole real second. Blocking (up to about a
    second): the orchestrator calls `pin_clock` in a worker thread, so its event loop (the
    proxy's control client, Ctrl-C) goes on meanwhile."""
    delay = math.floor(written) + 1 + SETTLE_MARGIN_S - time.time()
    if delay > 0:
        time.sleep(delay)


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
