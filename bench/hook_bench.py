"""CPU per call of the live proxy's hooks (request, responseheaders, response), in-process: no
sockets, no mitmproxy server, so the figure is the metering's own work and steadier than a
loaded machine's wall times (issue 11).

Drives plain OpenAI chat calls through the harness addons in mitmproxy's test kit
(`tests/proxy/addon_kit.py`) in live mode, the upstream's reply made in memory after the request
hook has priced, reserved, journaled and pointed the call at it; then checks that every call was
logged as metered. The figure is the event loop thread's CPU time per call (the ledger's writer
thread and the fsync pool are not in it). With `--before DIR` (a `git worktree` of an older commit)
it measures that checkout too, in alternating child processes, so both share the machine's load.

With `--stream` the calls ask for a stream, so the request hook does what it does for a streamed
call (live mode rewrites it to ask for usage, and sends the body re-serialised); the reply stays a
plain JSON body, as the kit does not stream (the stream tap has its own bench: bench/tap_bench.py).

Run: `.venv/bin/python -m bench.hook_bench [--before /tmp/p11-before] [--rounds 3] [--stream]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-bench-dummy-study-key"
WARMUP = 200


def _reply(n: int) -> bytes:
    return json.dumps(
        {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Hello there, a reply."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18},
        }
    ).encode()


async def _measure(calls: int, stream: bool) -> float:
    from mitmproxy import eventsequence, http

    from tests.proxy.addon_kit import addon_context

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        options = {
            "harness_mode": "live",
            "harness_cap": "1000",
            "harness_ledger": str(Path(tmp) / "ledger.jsonl"),
            "harness_upstreams": ["openai=http://127.0.0.1:9"],  # never dialled: see `one`
            "harness_deadline": 600.0,
        }
        async with addon_context(run, **options) as kit:
            auth = {"authorization": "Bearer harness-placeholder-key"}

            async def one(n: int) -> None:
                body = {
                    "model": "gpt-4.1-mini",
                    "messages": [{"role": "user", "content": f"Hello, bench request {n}"}],
                    "max_tokens": 64,
                }
                if stream:
                    body["stream"] = True
                flow = kit.flow("/openai/v1/chat/completions", body, headers=auth)
                flow.request.timestamp_end = time.time()
                for event in eventsequence.iterate(flow):
                    await kit.hook(event)
                    if event.name == "request":
                        if flow.response is not None:
                            raise RuntimeError(f"call refused: {flow.response.content!r}")
                        flow.response = http.Response.make(
                            200, _reply(n), {"content-type": "application/json"}
                        )

            for n in range(WARMUP):
                await one(n)
            start = time.thread_time()
            for n in range(WARMUP, WARMUP + calls):
                await one(n)
            per_call = (time.thread_time() - start) / calls
        records = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    metered = [r for r in records if r["outcome"] == "ok" and r["tokens"]["source"] == "vendor"]
    if len(metered) != WARMUP + calls:
        raise RuntimeError(f"{len(metered)} of {WARMUP + calls} calls were logged as metered")
    return per_call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--before", type=Path, help="also measure this checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3000, help="calls measured per round")
    parser.add_argument("--stream", action="store_true", help="calls that ask for a stream")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(asyncio.run(_measure(args.child, args.stream)))
        return 0
    # Here, not at the top: a child runs this file with another checkout's `bench` first.
    from bench.proxybench import alternate, print_rounds

    child_args = [str(args.calls), *(["--stream"] if args.stream else [])]
    env = {"OPENAI_API_KEY": KEY}
    runs = alternate(args.rounds, args.before, __file__, child_args, ROOT, env)
    print_rounds(
        runs,
        lambda values: (
            f"hooks CPU per {'streamed ' if args.stream else ''}call "
            f"{median(values) * 1e6:.0f} us (rounds "
            + ", ".join(f"{v * 1e6:.0f}" for v in values)
            + ")"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
