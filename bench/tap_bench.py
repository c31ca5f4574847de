"""CPU per streamed event of the live proxy's stream tap (key redaction, the key guard across
events, the usage meter), without mitmproxy or sockets: steadier than wall times on a loaded
machine, and what py-spy showed as the proxy's largest per-chunk cost (issue 11).

Feeds `bench.vendor_upstream`'s 50-event reply, write by write, through `StreamCleaner` and
`StreamMeter` as `proxy.live.forwarder`'s tap does, and checks the bytes out and the usage. With
`--before DIR` (a `git worktree` of an older commit) it measures that checkout too, in
alternating child processes, so both share the machine's load.

Run: `.venv/bin/python -m bench.tap_bench [--before /tmp/p5-before] [--rounds 3] [--per-write 10]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KEYS = {
    "OPENAI_API_KEY": "sk-bench-dummy-study-key",
    "ANTHROPIC_API_KEY": "sk-ant-bench-dummy-0123",
}


def measure(streams: int, events: int, per_write: int = 1) -> float:
    """CPU seconds per stream of the tap in this process's checkout; `per_write` events reach
    it in each write (as when the proxy reads several of the vendor's chunks at once)."""
    from mitmproxy import http

    from bench.vendor_upstream import stream_writes

    try:
        from proxy.flow.callstate import CallState
        from proxy.metering.usage import StreamMeter
        from proxy.redact.secrets import SecretRedactor
        from proxy.redact.stream import StreamCleaner
    except ImportError:  # a checkout from before proxy/ was split into parts (issue 23)
        from proxy.callstate import CallState  # type: ignore[no-redef]
        from proxy.live_redact import StreamCleaner  # type: ignore[no-redef]
        from proxy.usage import StreamMeter  # type: ignore[no-redef]

        from proxy.redact import SecretRedactor

    writes = [w.partition(b"\r\n")[2][:-2] for w in stream_writes(events)]  # de-chunked
    writes = [b"".join(writes[i : i + per_write]) for i in range(0, len(writes), per_write)]
    redactor = SecretRedactor(KEYS)
    by_events = hasattr(StreamMeter, "feed_events")  # the one-framing tap (issue 11)

    def one() -> bytes:
        state = CallState("openai", "/v1/chat/completions", "POST", "arm", "", 0.0)
        response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
        # Any: the two checkouts' cleaners return events (after) or bytes (before).
        cleaner: Any = StreamCleaner(redactor, state, response)
        meter = StreamMeter("openai.chat", "gpt-4.1-mini")
        feed: Any = meter.feed_events if by_events else meter.feed
        out = b"".join(feed(cleaner.feed(w)) for w in writes)
        out += feed(cleaner.finish()) + (b"" if by_events else meter.finish())
        usage = meter.usage()
        if usage.source != "vendor" or not usage.terminal_seen:
            raise RuntimeError(f"the tap metered {usage}")
        return out

    if one() != b"".join(writes):
        raise RuntimeError("the tap changed the stream's bytes")
    for _ in range(20):
        one()
    start = time.process_time()
    for _ in range(streams):
        one()
    return (time.process_time() - start) / streams


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--before", type=Path, help="also measure this checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--streams", type=int, default=300)
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument(
        "--per-write", type=int, default=1, help="events in each write the tap gets (1: paced)"
    )
    parser.add_argument("--child", nargs="+", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(measure(*args.child))
        return 0
    # Here, not at the top: a child runs this file with another checkout's `bench` first.
    from bench.proxybench import alternate, print_rounds

    child_args = [str(args.streams), str(args.events), str(args.per_write)]
    runs = alternate(args.rounds, args.before, __file__, child_args, ROOT)
    print_rounds(
        runs,
        lambda values: (
            f"tap CPU per {args.events}-event stream ({args.per_write} a write) "
            f"{median(values) * 1e3:.2f} ms "
            f"({median(values) / args.events * 1e6:.0f} us/event; rounds "
            + ", ".join(f"{v * 1e3:.2f}" for v in values)
            + ")"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
