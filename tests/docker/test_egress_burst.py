"""Floods cannot erase or shrink the evidence. A burst of refused packets cannot erase the
record of the real attempt before it: one
connection attempt to the host through the arm network's gateway, then 1,500 refused SYNs in a
fraction of a second (far more than the kernel log's ring holds). The kernel log is followed
from the run's start, so egress.jsonl names the real attempt, the halt names it, and every
packet the firewall refused is either in egress.jsonl (counted) or said to be dropped. A flood
of DNS lookups of one name (many in each millisecond) is counted lookup by lookup, or the
shortfall is said.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from harness.isolation.egress_book import attempts
from tests.helpers.studies import read_jsonl
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
BURST = 1500
FLOOD = 3000


@pytest.fixture
def host_port() -> Iterator[int]:
    """A listening port of this test on every host address: the arm must not reach it."""
    with socket.create_server(("0.0.0.0", 0)) as server:
        yield server.getsockname()[1]


def test_a_syn_burst_does_not_hide_the_real_attempt(
    docker_engine: docker.DockerClient, images: None, host_port: int, tmp_path: Path
) -> None:
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    shutil.copy(Path(__file__).with_name("burst_arm.py"), study_dir / "burst_arm.py")
    item = {"id": "burst", "clock": "2024-05-01T10:00:00Z", "turns": [{"user": "go"}]}
    study = StudyBuilder(name="burst", items=[item])
    study.arm("burster", "python burst_arm.py", REAL_PORT=str(host_port), BURST=str(BURST))
    study.set(deadline_ms=30000, on_stray="halt")
    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "record", str(study.write(study_dir)),
         "--isolation", "docker", "--run-dir", str(runs)],
        cwd=REPO, env={**os.environ, "HARNESS_NO_PROGRESS": "1"},
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    header = json.loads((run_dir / "run.json").read_text())["study"]
    (turn,) = read_jsonl(run_dir / "turns.jsonl")
    gateway = turn["text"].split()[1].rsplit(":", 1)[0] if turn["text"] else None
    egress = read_jsonl(run_dir / "egress.jsonl")
    kernel = [e for e in egress if e["source"] == "kernel"]
    real = [e for e in kernel if e["destination"].endswith(f":{host_port}")]
    # The real attempt is named, first, and it is what halted the run.
    assert len(real) == 1 and real[0]["arm"] == "burster", kernel[:3]
    assert kernel[0] is real[0] or kernel[0] == real[0]
    if gateway:
        assert real[0]["destination"] == f"{gateway}:{host_port}"
    assert f":{host_port} (tcp, kernel)" in (header["halted"] or ""), header["halted"]
    # Every refused packet is accounted for: in egress.jsonl (counted), or said to be dropped.
    logged = sum(attempts(e) for e in kernel)
    missing = header["egress_dropped"].get("burster", 0)
    assert logged + missing == BURST + 1, (logged, missing)
    assert header["stray_connections"] == logged
    if missing:
        assert "EVIDENCE DROPPED" in done.stdout
    # The follower's own record is kept in the run.
    assert (run_dir / "logs" / "kernel.log").stat().st_size > 0


def run_one(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    shutil.copy(Path(__file__).with_name("burst_arm.py"), study_dir / "burst_arm.py")
    item = {"id": "flood", "clock": "2024-05-01T10:00:00Z", "turns": [{"user": "go"}]}
    study = StudyBuilder(name="flood", items=[item]).arm("flooder", "python burst_arm.py", **env)
    study.set(deadline_ms=30000, on_stray="fail")
    runs = tmp_path / "runs"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "record", str(study.write(study_dir)),
         "--isolation", "docker", "--run-dir", str(runs)],
        cwd=REPO, env={**os.environ, "HARNESS_NO_PROGRESS": "1"},
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    return done, run_dir


def test_a_dns_flood_of_one_name_is_counted_lookup_by_lookup(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> None:
    done, run_dir = run_one(tmp_path, FLOOD=str(FLOOD))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    header = json.loads((run_dir / "run.json").read_text())["study"]
    dns = [e for e in read_jsonl(run_dir / "egress.jsonl") if e["source"] == "dns"]
    assert {(e["arm"], e["destination"]) for e in dns} == {("flooder", "flood.example")}
    logged = sum(attempts(e) for e in dns)
    missing = header["egress_dropped"].get("flooder", 0)
    assert logged + missing == FLOOD, (logged, missing)  # every query, logged or said lost
    assert logged > 1  # not merged into one entry per millisecond
    assert header["refused"]["flooder"]["flood.example"] == logged
    if missing:
        assert "EVIDENCE DROPPED" in done.stdout, done.stdout
