"""The drive's thread pool grows with the workers: 8 workers' blocking steps (a snapshot, a
liveness check, a bound check, a stray look: THREADS_PER_WORKER each) all run at once, where
asyncio's default pool (min(32, cores + 4) threads) made them queue."""

from __future__ import annotations

import asyncio
import threading

from harness.run.stages.drive import THREADS_PER_WORKER, drive_pool

WORKERS = 8


async def _all_at_once(parties: int) -> bool:
    """Whether `parties` blocking calls in the loop's default pool were all running together:
    each waits at one barrier, which breaks unless every one of them arrives."""
    barrier = threading.Barrier(parties, timeout=20)

    def wait() -> bool:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return False
        return True

    return all(await asyncio.gather(*(asyncio.to_thread(wait) for _ in range(parties))))


def test_every_workers_blocking_steps_run_at_once() -> None:
    async def run() -> bool:
        asyncio.get_running_loop().set_default_executor(drive_pool(WORKERS))
        return await _all_at_once(WORKERS * THREADS_PER_WORKER)

    assert asyncio.run(run())


def test_a_single_worker_still_gets_its_steps_and_the_loop_a_few_more() -> None:
    pool = drive_pool(1)
    assert pool._max_workers >= THREADS_PER_WORKER + 1
    pool.shutdown()
