"""Issue 26's overhead figure: the harness's own time per turn, outside the arm and the stub.

    .venv/bin/python -m bench.turn_cost_bench [--turns 60] [--items 30]

Runs the quickstart's `bare` arm (one streamed chat call per turn, answered by the stubs) in this
process (`run_study`, record mode, local backend) with timers laid over the orchestrator: its
work on an item on an arm (`ItemOnArm.run`: telling the proxy, the stray and bound
checks, the records), the seam calls inside it (`TurnWatch.collect`, opening and closing the
session: the arm, the proxy and the stub), and the clock pin (`pin_clock`, once per item and
arm; libfaketime's cache is waited out, up to a second, which is waiting, not work). The
harness's own time per turn is the first minus the others, over the turns. Two shapes: one item
of `--turns` turns (the per-turn cost) and `--items` one-turn items (what a turn costs when each
is its own item: the memory controls and the records of an item, telling the proxy it ended).

The proxy's own time per call (request in to reply out, the stub's answer included) is read
from calls.jsonl for reference. Timers are wrappers set on the classes for this process only.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"


class Timers:
    def __init__(self) -> None:
        self.spent: dict[str, float] = dict.fromkeys(
            ("item", "seam", "pin", "tell", "strays", "bounds"), 0.0
        )

    def wrap_async(self, owner: type, name: str, key: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                self.spent[key] += time.perf_counter() - start

        setattr(owner, name, timed)

    def wrap(self, owner: type, name: str, key: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.spent[key] += time.perf_counter() - start

        setattr(owner, name, timed)


def make_study(folder: Path, items: list[dict[str, Any]]) -> Path:
    shutil.copytree(QUICKSTART, folder)
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    study = (folder / "study.toml").read_text().replace('"../../ledger.jsonl"', '"ledger.jsonl"')
    (folder / "study.toml").write_text(study)
    return folder / "study.toml"


def measure(items: list[dict[str, Any]]) -> dict[str, float]:
    from arms.client import SeamClient
    from harness.isolation.local import LocalBackend
    from harness.run.item_on_arm import ItemOnArm
    from harness.run.orchestrator import Orchestrator
    from harness.run.pipeline import RunRequest, run_study
    from harness.run.watch.stray_watch import StrayWatch
    from harness.run.watch.turn_watch import TurnWatch
    from harness.study import load_study

    timers = Timers()
    saved = (ItemOnArm.run, TurnWatch.collect, LocalBackend.pin_clock)
    sessions = (SeamClient.open_session, SeamClient.close_session)
    parts = (Orchestrator.tell_proxy, StrayWatch.new, Orchestrator.met_bound)
    # Where the harness's own time goes (inside "item", outside the seam calls):
    timers.wrap_async(Orchestrator, "tell_proxy", "tell")  # the control channel's round trip
    timers.wrap_async(StrayWatch, "new", "strays")  # a look at the egress sources after a turn
    timers.wrap_async(Orchestrator, "met_bound", "bounds")  # the arm's bounds, after a turn
    timers.wrap_async(ItemOnArm, "run", "item")
    timers.wrap_async(TurnWatch, "collect", "seam")
    timers.wrap_async(SeamClient, "open_session", "seam")  # the arm's work on the seam too
    timers.wrap_async(SeamClient, "close_session", "seam")
    timers.wrap(LocalBackend, "pin_clock", "pin")
    try:
        with tempfile.TemporaryDirectory(prefix="turn-cost-") as tmp:
            study = load_study(make_study(Path(tmp) / "study", items))
            request = RunRequest(
                study=study, mode="record", run_root=Path(tmp) / "runs", isolation="local",
                arms=["bare"],
            )  # fmt: skip
            result = run_study(request)
            if not result.passed:
                raise SystemExit(f"the run failed: {result.run_dir}")
            calls = [json.loads(x) for x in (result.run_dir / "calls.jsonl").read_text().split()]
            turns = sum(1 for x in (result.run_dir / "turns.jsonl").read_text().splitlines() if x)
    finally:
        ItemOnArm.run, TurnWatch.collect, LocalBackend.pin_clock = saved  # type: ignore[method-assign]
        SeamClient.open_session, SeamClient.close_session = sessions  # type: ignore[method-assign]
        Orchestrator.tell_proxy, StrayWatch.new, Orchestrator.met_bound = parts  # type: ignore[method-assign]
    own = timers.spent["item"] - timers.spent["seam"] - timers.spent["pin"]
    proxy = [c["timing"]["end"] - c["timing"]["start"] for c in calls]
    return {
        "turns": turns,
        "own_ms": 1000 * own / turns,
        "seam_ms": 1000 * timers.spent["seam"] / turns,
        "pin_ms": 1000 * timers.spent["pin"] / turns,
        "proxy_ms": 1000 * statistics.median(proxy),
        **{f"{k}_ms": 1000 * timers.spent[k] / turns for k in ("tell", "strays", "bounds")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--items", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("HARNESS_NO_PROGRESS", "1")
    kites = [{"user": f"I saw {n} red kites today."} for n in range(max(args.turns, args.items))]
    long_item = [{"id": "long", "clock": "2024-05-01T10:00:00", "turns": kites[: args.turns]}]
    short_items = [
        {"id": f"short{n}", "clock": "2024-05-01T10:00:00", "turns": [kites[n]]}
        for n in range(args.items)
    ]
    load = os.getloadavg()[0]
    rows = [
        (f"one item of {args.turns} turns", measure(long_item)),
        (f"{args.items} one-turn items", measure(short_items)),
    ]
    print(f"{os.cpu_count()} cores, Python {platform.python_version()}, load {load:.2f}")
    print(
        "| shape | turns | harness's own ms/turn | seam ms/turn (arm+proxy+stub) "
        "| clock pin ms/turn | proxy ms/call (median, stub included) "
        "| of the harness's own: control channel / stray look / bounds, ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for shape, r in rows:
        print(f"| {shape} | {r['turns']:.0f} | {r['own_ms']:.1f} | {r['seam_ms']:.1f} "
              f"| {r['pin_ms']:.1f} | {r['proxy_ms']:.1f} "
              f"| {r['tell_ms']:.1f} / {r['strays_ms']:.1f} / {r['bounds_ms']:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
