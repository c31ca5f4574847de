"""One live job at a time, as a user meets it: two `harness live` runs on one ledger started
together against a fake vendor, one runs and the other is refused in one line naming it; a job
killed with -9 blocks the next only while its proxy still holds the keys, and the takeover is
recorded in the ledger; a live `harness proxy serve` holds the keys too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import gate_study
from tests.helpers.studies import REPO, harness, header, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def _live(study: Path, runs: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "--log-json", "live", str(study), "--cap", "1",
         "--run-dir", str(runs), "--isolation", "local"],
        cwd=REPO, env={**os.environ, **STUDY_KEYS, "HARNESS_NO_PROGRESS": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _live_runs(runs: Path) -> set[Path]:
    return {p for p in runs.iterdir() if (p / "run.json").exists() and header(p)["mode"] == "live"}


def _wait_for_proxy(runs: Path, before: set[Path]) -> tuple[Path, int]:
    """The new live run's directory and its proxy's pid, once the proxy has started."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for run in _live_runs(runs) - before:
            pids = run / "pids.json"
            if pids.exists():
                procs = json.loads(pids.read_text())["processes"]
                proxy = [p["pid"] for p in procs if p["name"] == "proxy"]
                if proxy:
                    return run, proxy[0]
        time.sleep(0.1)
    raise AssertionError("the live run's proxy never started")


def _refusal(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if "live job refused" in line]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, FakeVendor]]:
    base = tmp_path_factory.mktemp("live-job")
    with FakeVendor() as vendor:
        study = gate_study(base / "study", vendors={"openai": vendor.url})
        runs = base / "runs"
        done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stderr[-3000:]
        # Room in the stage for every run here, a killed run's open reservation included.
        ledger = str(study.parent / "ledger.jsonl")
        opened = harness("ledger", "open-stage", "default", "--cap", "100", "--ledger", ledger)
        assert opened.returncode == 0, opened.stderr
        yield study, runs, vendor


def test_two_live_runs_started_together_one_runs_the_other_is_refused_naming_it(
    gated: tuple[Path, Path, FakeVendor],
) -> None:
    study, runs, vendor = gated
    vendor.reset()
    vendor.script(["first_byte_delay=1"] * 3)  # the winner is still running when the loser asks
    before = _live_runs(runs)
    first, second = _live(study, runs), _live(study, runs)
    outs = [p.communicate(timeout=300) for p in (first, second)]
    codes = [first.returncode, second.returncode]
    assert sorted(codes) == [0, 2], outs  # 2: a user error, refused
    winner = outs[codes.index(0)]
    loser_err = outs[codes.index(2)][1]
    (ran,) = _live_runs(runs) - before  # the refused run left no directory
    assert ran.name in winner[0] + winner[1]
    line = _refusal(loser_err)
    assert f"run {ran.name} (pid " in line and "holds the keys" in line
    assert header(ran)["study"]["passed"] is True


def test_a_job_killed_with_9_is_taken_over_once_its_proxy_is_gone(
    gated: tuple[Path, Path, FakeVendor],
) -> None:
    study, runs, vendor = gated
    vendor.reset()
    vendor.script(["hang"])  # the first job's first call: it never finishes on its own
    before = _live_runs(runs)
    first = _live(study, runs)
    killed, proxy_pid = _wait_for_proxy(runs, before)
    first.send_signal(signal.SIGKILL)
    first.wait(30)

    # The harness is gone but its proxy (own process group) still runs with the keys.
    done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs),
                   "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
    assert done.returncode == 2
    line = _refusal(done.stderr)
    assert f"run {killed.name} died holding the keys" in line and f"pid {proxy_pid}" in line
    assert "harness cleanup" in line

    os.killpg(proxy_pid, signal.SIGKILL)
    vendor.reset()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{proxy_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    # What the killed job left besides its claim (its firewall rules, its proxy's cgroup).
    cleaned = harness("cleanup", "--run-dir", str(runs))
    assert cleaned.returncode == 0, cleaned.stderr
    done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs),
                   "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (third,) = _live_runs(runs) - before - {killed}
    ledger = read_jsonl(study.parent / "ledger.jsonl")
    (takeover,) = [e for e in ledger if e["kind"] == "live_job_taken_over"]
    assert takeover["fields"]["stale_run_id"] == killed.name
    assert takeover["fields"]["run_id"] == third.name
    assert "took over the keys" in done.stderr
    verified = harness("ledger", "verify", "--ledger", str(study.parent / "ledger.jsonl"))
    assert verified.returncode == 0, verified.stderr


def test_a_live_proxy_serve_holds_the_keys_too(
    gated: tuple[Path, Path, FakeVendor], tmp_path: Path
) -> None:
    study, runs, vendor = gated
    ledger = study.parent / "ledger.jsonl"
    serve = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "proxy", "serve", "--mode", "live", "--cap", "1",
         "--port", "0", "--ledger", str(ledger), "--run-dir", str(tmp_path / "serve"),
         "--upstream", f"openai={vendor.url}"],
        cwd=REPO, env={**os.environ, **STUDY_KEYS},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert serve.stdout is not None
        ready = serve.stdout.readline()
        assert "harness proxy (live)" in ready, serve.stderr.read() if serve.stderr else ""
        done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs),
                       "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
        assert done.returncode == 2
        assert "run serve (pid " in _refusal(done.stderr)
        # And a second proxy serve is refused, naming the first.
        again = harness("proxy", "serve", "--mode", "live", "--cap", "1", "--port", "0",
                        "--ledger", str(ledger), "--run-dir", str(tmp_path / "again"),
                        env=STUDY_KEYS)  # fmt: skip
        assert again.returncode != 0 and "run serve (pid " in _refusal(again.stderr)
        assert not (tmp_path / "again").exists()
    finally:
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=60)
    done = harness("live", str(study), "--cap", "1", "--run-dir", str(runs),
                   "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
