"""The stray watch reads the egress logs in a thread while a worker starts another arm; the
look must not trip over the arm being added (harness/isolation/local/backend.py)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from harness.isolation.base import ArmSpec
from harness.isolation.local.backend import LocalBackend


def test_looking_for_strays_while_arms_are_added_does_not_fail(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    for number in range(50):  # arms already running, so that one look takes a while
        backend.specs[f"A-w{number}"] = ArmSpec(command=[sys.executable])
    failures: list[BaseException] = []
    stop = threading.Event()

    def look() -> None:
        while not stop.is_set():
            try:
                backend.egress_attempts()
            except BaseException as error:  # what the thread raised is the finding
                failures.append(error)
                return

    watcher = threading.Thread(target=look)
    watcher.start()
    try:
        for number in range(50, 550):  # as workers do: a new arm while a look is under way
            backend.specs[f"A-w{number}"] = ArmSpec(command=[sys.executable])
            time.sleep(0.001)
            if failures:
                break
    finally:
        stop.set()
        watcher.join()
    assert failures == []
