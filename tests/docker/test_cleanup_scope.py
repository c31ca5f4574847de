"""`harness cleanup --force --run-dir ROOT` on a node running two roots' runs (harness/isolation/
owner.py OwnedRuns, docker/leftovers.py): the containers, networks and firewall rules of the run
under ROOT go, those of the live run under the other root stay (running, confined), as another
shard's on the same node must."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from harness.isolation import firewall, owner, pids
from harness.isolation.docker.backend import PROXY_IMAGE
from tests.docker.test_docker_backend import leftovers
from tests.helpers.studies import harness

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def _live_run(
    client: docker.DockerClient, root: Path, name: str
) -> tuple[str, subprocess.Popen[bytes]]:
    """A run mid-way as a live docker harness leaves it: pids.json naming the harness, and a
    network, a container on it and a firewall rule labelled with the run and that harness."""
    run_id = f"{name}-{os.getpid()}-{time.time_ns()}"
    run_dir = root / run_id
    run_dir.mkdir(parents=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    who = f"{live.pid}:{pids.start_time(live.pid)}"
    harness_entry = {"pid": live.pid, "start": pids.start_time(live.pid)}
    (run_dir / pids.FILE).write_text(json.dumps({"harness": harness_entry, "processes": []}))
    labels = {owner.RUN_LABEL: run_id, owner.OWNER_LABEL: who}
    network = client.networks.create(f"harness-{run_id}-ctl", internal=True, labels=labels)
    client.containers.run(
        PROXY_IMAGE, ["600"], entrypoint="sleep", name=f"harness-{run_id}-proxy",
        network=network.name, labels=labels, detach=True,
    )  # fmt: skip
    comment = f"{owner.RUN_LABEL}={run_id} owner={who}"
    rule = ["INPUT", "-s", "192.0.2.78", "-m", "comment", "--comment", comment, "-j", "RETURN"]
    assert firewall.run_tool("iptables", ["-I", *rule]).returncode == 0
    return run_id, live


@pytest.fixture
def two_roots(
    docker_engine: docker.DockerClient, images: None, tmp_path: Path
) -> Iterator[tuple[Path, str, str]]:
    mine, mine_owner = _live_run(docker_engine, tmp_path / "root-2", "mine")
    other, other_owner = _live_run(docker_engine, tmp_path / "root-1", "other")
    try:
        yield tmp_path / "root-2", mine, other
    finally:
        for process in (mine_owner, other_owner):
            process.kill()
            process.wait()
        for run_id in (mine, other):
            owner.remove_rules(run_id)
            for c in docker_engine.containers.list(
                all=True, filters={"label": f"{owner.RUN_LABEL}={run_id}"}
            ):
                c.remove(force=True)
            for n in docker_engine.networks.list(filters={"label": f"{owner.RUN_LABEL}={run_id}"}):
                n.remove()


def test_force_cleanup_of_one_root_leaves_the_other_roots_live_run_intact(
    docker_engine: docker.DockerClient, two_roots: tuple[Path, str, str]
) -> None:
    root, mine, other = two_roots
    done = harness("cleanup", "--force", "--run-dir", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    assert leftovers(docker_engine, mine) == []
    kept = leftovers(docker_engine, other)
    assert f"harness-{other}-proxy" in kept and f"harness-{other}-ctl" in kept, kept
    assert any(line.startswith("-A INPUT") for line in kept), kept  # its rule
    (container,) = docker_engine.containers.list(filters={"label": f"{owner.RUN_LABEL}={other}"})
    assert container.status == "running"
    assert other not in done.stdout
