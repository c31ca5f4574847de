"""`harness cleanup --run-dir ROOT` (and `--force`) touches only the runs under ROOT
(harness/isolation/owner.py OwnedRuns): two runs under two roots, each with a live harness, its
processes, its firewall rules and its proxy cgroup; cleaning one root stops and removes that
root's, and leaves the other's running and confined, as a shard on the same node must be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.isolation import firewall, owner, pids
from harness.isolation.local import proxy_rule
from tests.helpers.studies import harness

pytestmark = pytest.mark.skipif(
    proxy_rule.unavailable() is not None, reason="needs root, iptables and cgroup2"
)


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                            start_new_session=True)  # fmt: skip


@dataclass
class FakeRun:
    """A run as a live harness leaves it mid-run: pids.json naming the harness and one child,
    a firewall rule and a proxy cgroup carrying the run's id and owner."""

    run_dir: Path
    harness: subprocess.Popen[bytes]
    child: subprocess.Popen[bytes]
    rule: list[str]
    cgroup: Path

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def rule_present(self) -> bool:
        return firewall.run_tool("iptables", ["-C", *self.rule]).returncode == 0

    def stop(self) -> None:
        for process in (self.harness, self.child):
            process.kill()
            process.wait()
        firewall.run_tool("iptables", ["-D", *self.rule])
        if self.cgroup.exists():
            self.cgroup.rmdir()


def _fake_run(root: Path, name: str) -> FakeRun:
    run_dir = root / f"{name}-{os.getpid()}-{time.time_ns()}"
    run_dir.mkdir(parents=True)
    live, child = _sleeper(), _sleeper()
    who = f"{live.pid}:{pids.start_time(live.pid)}"
    data = {
        "harness": {"pid": live.pid, "start": pids.start_time(live.pid)},
        "processes": [{"name": "arm", "pid": child.pid, "start": pids.start_time(child.pid),
                       "command": ["sleep"]}],
    }  # fmt: skip
    (run_dir / pids.FILE).write_text(json.dumps(data))
    comment = f"{owner.RUN_LABEL}={run_dir.name} owner={who}"
    rule = ["OUTPUT", "-d", "192.0.2.77", "-m", "comment", "--comment", comment, "-j", "RETURN"]
    assert firewall.run_tool("iptables", ["-I", *rule]).returncode == 0
    root_cgroup = proxy_rule.cgroup2_root()
    assert root_cgroup is not None
    # The proxy cgroup of a harness that is gone (a pid that has exited).
    cgroup = root_cgroup / f"harness-{firewall.run_tag(run_dir.name)}-proxy-{_dead_pid()}"
    cgroup.mkdir()
    return FakeRun(run_dir, live, child, rule, cgroup)


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture
def two_runs(tmp_path: Path) -> Iterator[tuple[FakeRun, FakeRun]]:
    mine, other = _fake_run(tmp_path / "root-2", "mine"), _fake_run(tmp_path / "root-1", "other")
    try:
        yield mine, other
    finally:
        mine.stop()
        other.stop()


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_cleanup_of_one_root_leaves_the_other_roots_live_run_intact(
    two_runs: tuple[FakeRun, FakeRun], force: bool
) -> None:
    mine, other = two_runs
    args = ["cleanup", "--run-dir", str(mine.run_dir.parent), *(["--force"] if force else [])]
    done = harness(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    # The other root's run: still running, confined, its cgroup there, whatever --force says.
    assert other.child.poll() is None and other.harness.poll() is None
    assert other.rule_present(), done.stdout
    assert other.cgroup.exists()
    assert (other.run_dir / pids.FILE).exists()
    assert other.run_id not in done.stdout
    # This root's: its dead proxy's cgroup goes either way; the live run only with --force.
    assert not mine.cgroup.exists()
    if force:
        mine.child.wait(timeout=60)
        assert not mine.rule_present()
        assert f"{mine.run_id}: stopped arm (pid {mine.child.pid})" in done.stdout
    else:
        assert mine.child.poll() is None and mine.rule_present()
        assert f"{mine.run_id}: still running" in done.stdout
