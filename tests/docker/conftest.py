"""The `docker_engine` fixture: a docker SDK client for tests that need a real engine.

Without an engine these tests skip, and the reason is printed at the end of the run; under CI
(CI=true) a missing engine fails them instead, because .ci/run starts one and a silent skip there
would hide that the container tests never ran.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker
import pytest

from harness.errors import HarnessError
from harness.images.image import DockerCLI

_skipped_reasons: set[str] = set()


def _engine_problem() -> tuple[docker.DockerClient | None, str]:
    # Asked through the CLI first, as `harness images` asks: a docker SDK client that finds no
    # engine leaves its socket open (a ResourceWarning, an error under -W error).
    try:
        DockerCLI().server_version()
    except HarnessError as e:
        return None, e.message
    return docker.from_env(timeout=60), ""


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[docker.DockerClient]:
    client, problem = _engine_problem()
    if client is None:
        message = f"{problem}; run scripts/ensure-docker (as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {message}", pytrace=False)
        _skipped_reasons.add(message)
        pytest.skip(message)
    yield client
    client.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for reason in sorted(_skipped_reasons):
        terminalreporter.write_line(f"tests/docker skipped: {reason}", yellow=True)


@pytest.fixture(scope="session")
def images(docker_engine: docker.DockerClient) -> None:
    """The harness images, built offline (seconds when their inputs did not change)."""
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True), lambda line: None)
