"""docs/live.md's "Recovering a failed shard", step by step as written: two live shards in one
folder under one stage cap; shard 2's proxy is killed mid-run (a failed run) and a run of it
that would pass the stage cap is refused (and leaves nothing); after `harness cleanup` and a
re-run of the shard, `harness merge ROOT` takes the run that passed, names the failed one it
left out, replaces its earlier merge, and the merged run audits clean. No run is deleted by
hand."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from rundir.control.proxy_file import PROXY_READY
from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import GATE_ARM
from tests.helpers.shard_runs import same_checkout
from tests.helpers.studies import harness, header, spawn_harness
from tests.proxy.live_helpers import STUDY_KEYS
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]  # nine harness commands

ITEMS = [
    {"id": f"n{k}", "clock": f"2024-05-0{k}T10:00:00", "turns": [{"user": f"note {k}"}]}
    for k in range(1, 5)
]
SHARD_CAP = "0.5"


def _live(study: Path, root: Path, shard: str, cap: str = SHARD_CAP) -> tuple[int, str]:
    done = harness("live", str(study), "--shard", shard, "--cap", cap, "--run-dir", str(root),
                   "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _shard_runs(root: Path) -> set[Path]:
    return {p for p in root.iterdir() if (p / "run.json").exists() and header(p)["mode"] == "live"}


def _kill_its_proxy_once_ready(root: Path, before: set[Path], harness_proc: object) -> Path:
    """The new run's proxy, SIGKILLed once it has said it is ready (the arms then find it gone)."""
    for _ in range(6000):  # polls, not a time bound: the loop ends when the run gets that far
        new = [p for p in root.iterdir() if p not in before and (p / "pids.json").exists()]
        if new:
            run = new[0]
            log = run / "logs" / "proxy.log"
            pids = json.loads((run / "pids.json").read_text())["processes"]
            proxy = [p["pid"] for p in pids if p["name"] == "proxy"]
            if proxy and log.exists() and PROXY_READY in log.read_text(errors="replace"):
                os.kill(proxy[0], signal.SIGKILL)
                return run
        assert harness_proc.poll() is None  # type: ignore[attr-defined]
        time.sleep(0.05)
    raise AssertionError("the shard's proxy never came up")


def test_the_documented_recovery_of_a_failed_shard_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in STUDY_KEYS.items():  # the spawned shard's too
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARNESS_SKIP_SUITE", "1")  # the suite is what runs this
    root = tmp_path / "runs"
    with FakeVendor() as vendor:
        fields = {"deadline_ms": 20000, "vendors": {"openai": vendor.url}}
        fields |= {"stage": "recovery", "stage_cap": "2", "ledger": str(tmp_path / "ledger.jsonl")}
        builder = StudyBuilder(name="recovery", items=ITEMS, fields=fields)
        study = builder.arm("toy", f"python {GATE_ARM}").write(tmp_path / "study")
        gate = harness("gate", str(study), "--run-dir", str(root), "--isolation", "local")
        assert gate.returncode == 0, gate.stdout + gate.stderr[-3000:]

        code, said = _live(study, root, "1/2")
        assert code == 0, said[-3000:]
        before = _shard_runs(root)
        shard2 = spawn_harness("live", str(study), "--shard", "2/2", "--cap", SHARD_CAP,
                               "--run-dir", str(root), "--isolation", "local")  # fmt: skip
        failed = _kill_its_proxy_once_ready(root, before, shard2)
        shard2.communicate(timeout=300)
        assert header(failed)["manifest"] and not header(failed)["study"]["passed"]

        # A run that would pass the stage cap is refused before it starts: nothing is left.
        runs = set(root.iterdir())
        code, said = _live(study, root, "2/2", cap="5")
        assert code != 0 and "cap" in said and set(root.iterdir()) == runs, said[-2000:]

        # 1. The merge names the failed shard (and writes a merged run that failed).
        merged = Path(f"{root}.merged")
        same_checkout([root])
        done = harness("merge", str(root), "--out", str(merged))
        assert done.returncode == 1, done.stdout + done.stderr[-2000:]
        assert f"FAILED: shard 2/2 ({failed.resolve()}): " in done.stdout
        # 2. What the killed proxy's run left running.
        cleanup = harness("cleanup", "--run-dir", str(root), "--force")
        assert cleanup.returncode == 0, cleanup.stdout + cleanup.stderr[-2000:]
        # 3. The shard again, into the same folder.
        code, said = _live(study, root, "2/2")
        assert code == 0, said[-3000:]
        (rerun,) = _shard_runs(root) - before - {failed}
        # 4. The merge again: the run that passed is taken, the failed one named, the earlier
        # merge replaced; then the audit.
        same_checkout([root])
        done = harness("merge", str(root), "--out", str(merged))
        assert done.returncode == 0, done.stdout + done.stderr[-2000:]
        assert f"left out: {failed} (shard 2/2, failed: " in done.stdout
        assert f"; {rerun.name} taken: passed)" in done.stdout
        run = header(merged)["study"]
        assert run["passed"] and run["items"] == len(ITEMS)
        assert [Path(s["run_dir"]).name for s in run["merged_from"]][1] == rerun.name
        audit = harness("audit", str(merged))
        assert audit.returncode == 0, audit.stdout + audit.stderr[-3000:]
