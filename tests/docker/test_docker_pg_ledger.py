"""A docker live run with a PostgreSQL ledger (harness/isolation/proxy_rules.py): the proxy, in
its container, books every call at the ledger itself, so the OS rule on its own traffic allows
the ledger's TCP address and nothing else of that host. A ledger on the host's docker bridge
gateway is reached, the run passes with nothing refused and its settlements are in the ledger
(when the proxy image carries psycopg; the default images do not, and the run is refused in
one line before it starts); one on the host's 127.0.0.1 (not reachable from a container) is
refused in one line before anything starts, its fresh run directory removed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from tests.docker.test_docker_live import bridge_gateway, write_study
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import harness
from tests.pg_server import PgServer
from tests.proxy.live_helpers import STUDY_ANTHROPIC_KEY, STUDY_KEYS, STUDY_OPENAI_KEY

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def gateway(docker_engine: docker.DockerClient) -> str:
    return bridge_gateway(docker_engine)


@pytest.fixture(scope="module")
def pg_on_gateway(gateway: str) -> Iterator[PgServer]:
    """A PostgreSQL that listens on the docker bridge's gateway too, and trusts containers."""
    server = PgServer()
    try:
        with open(server.data / "pg_hba.conf", "a") as f:
            # Any source: the host's own connections to the gateway may come from another of
            # its addresses; the server listens on loopback and the bridge only, for this test.
            f.write("host all all 0.0.0.0/0 trust\n")
        server._options = server._options.replace(
            "listen_addresses=127.0.0.1", f"listen_addresses=127.0.0.1,{gateway}"
        )
        server.restart()
        yield server
    finally:
        server.stop()


def _live(study: Path, runs: Path, ledger_url: str) -> tuple[int, str]:
    env = {**STUDY_KEYS, "HARNESS_LEDGER_URL": ledger_url}
    done = harness(
        "live", str(study), "--cap", "2", "--run-dir", str(runs), "--isolation", "docker", env=env
    )
    return done.returncode, done.stdout + done.stderr


def _image_has_psycopg() -> bool:
    probe = ["docker", "run", "--rm", "--network", "none", "--entrypoint", "python"]
    done = subprocess.run(
        [*probe, "harness-proxy", "-c", "import psycopg"], capture_output=True, timeout=120
    )
    return done.returncode == 0


def test_a_ledger_on_the_gateway_is_reached_and_only_it(
    pg_on_gateway: PgServer, gateway: str, images: None, tmp_path: Path
) -> None:
    """With the `postgres` extra in the proxy image, the run books there; without it (the
    default images), the run is refused in one line before anything starts."""
    url = pg_on_gateway.new_database().replace("@127.0.0.1:", f"@{gateway}:")
    keys = {"anthropic": STUDY_ANTHROPIC_KEY, "openai": STUDY_OPENAI_KEY}
    vendor = FakeVendor(api_keys=keys)
    vendor.host = gateway
    runs = tmp_path / "runs"
    with vendor:
        study = write_study(tmp_path / "study", vendor.url)
        done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        opened = harness("ledger", "open-stage", "default", "--cap", "100", "--ledger", url)
        assert opened.returncode == 0, opened.stderr
        before = set(runs.iterdir())
        code, out = _live(study, runs, url)
    if not _image_has_psycopg():
        errors = [line for line in out.splitlines() if line.startswith("harness: error:")]
        assert errors == [
            "harness: error: the docker backend's proxy cannot reach the PostgreSQL ledger: "
            "the proxy image harness-proxy has no psycopg (the `postgres` extra), which the "
            "proxy books at a PostgreSQL ledger with"
        ], out[-3000:]
        assert code == 2 and set(runs.iterdir()) == before
        return
    assert code == 0, out[-3000:]
    (header,) = [
        h for p in runs.glob("*/run.json") if (h := json.loads(p.read_text()))["mode"] == "live"
    ]
    study_run = header["study"]
    assert f"ledger {gateway}={gateway}:{pg_on_gateway.port}" in study_run["proxy_rule"]
    assert study_run["proxy_refused"] == {} and study_run["passed"] is True
    shown = harness("ledger", "show", "--ledger", url)
    assert shown.returncode == 0, shown.stderr
    assert header["run_id"] in shown.stdout


def test_a_ledger_on_the_hosts_loopback_is_refused_before_the_run(
    docker_engine: docker.DockerClient, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    with FakeVendor() as vendor:
        study = write_study(tmp_path / "study", vendor.url)
        done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    before = set(runs.iterdir())
    code, out = _live(study, runs, "postgresql://postgres@127.0.0.1:5432/db")
    assert code == 2
    errors = [line for line in out.splitlines() if line.startswith("harness: error:")]
    assert errors == [
        "harness: error: the docker backend's proxy cannot reach the PostgreSQL ledger: its "
        "host 127.0.0.1 is the host's loopback, which in the proxy's container is the "
        "container's own: name the host by an address the container reaches (the host's LAN "
        "address, or the docker bridge's gateway) and let PostgreSQL listen there"
    ], out[-3000:]
    assert set(runs.iterdir()) == before  # nothing started, its fresh run directory gone
