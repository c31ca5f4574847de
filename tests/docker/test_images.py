"""The harness images, with real containers: built offline, the arm image runs the harness and the
SDKs, libfaketime pins its wall clock, and an internal network keeps a container in.

The first test that needs the images runs `build_images(--offline)`: a no-op when CI built them
already, a few seconds when only harness sources changed, minutes on a machine that has none.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import anthropic
import docker
import openai
import pytest
from docker.models.containers import Container
from docker.models.networks import Network

from harness.errors import HarnessError
from harness.images.build import BuildOptions, build_images
from harness.images.image import (
    ARM,
    BASE_TAG,
    IMAGES,
    INPUTS_LABEL,
    PROXY,
    PYTHON,
    DockerCLI,
    ImageInfo,
)
from harness.images.wheelhouse import IMAGE_PYTHON
from harness.isolation.proxy_ca import ensure_ca, fingerprint

# A cold build (debootstrap, wheels, three images) takes minutes; the first test pays for it.
pytestmark = pytest.mark.timeout(1800)

TEST_LABEL = {"harness.test": "tests/docker/test_images.py"}


@pytest.fixture(scope="session")
def harness_images(docker_engine: docker.DockerClient) -> tuple[list[ImageInfo], list[str]]:
    progress: list[str] = []
    built = build_images(BuildOptions(offline=True), progress.append)
    return built, progress


@pytest.fixture
def cleanup(docker_engine: docker.DockerClient) -> Iterator[list[Container | Network]]:
    """Everything a test creates goes in here and is removed afterwards, containers first."""
    made: list[Container | Network] = []
    yield made
    for thing in sorted(made, key=lambda t: isinstance(t, Network)):
        try:
            if isinstance(thing, Container):
                thing.remove(force=True)
            else:
                thing.remove()
        except docker.errors.NotFound:
            pass


def run_in(client: docker.DockerClient, image: str, command: list[str], **kwargs: object) -> str:
    """Run a short-lived container to completion and return its output (raises on failure)."""
    output = client.containers.run(
        image, command, remove=True, labels=TEST_LABEL, stderr=True, **kwargs
    )
    return output.decode() if isinstance(output, bytes) else str(output)


def test_missing_engine_says_to_run_ensure_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(HarnessError) as raised:
        DockerCLI().server_version()
    assert "no Docker engine answers" in str(raised.value)
    assert "scripts/ensure-docker" in str(raised.value)
    with pytest.raises(HarnessError, match="ensure-docker"):
        DockerCLI(binary="/nonexistent/docker").server_version()


def test_images_exist_with_their_inputs_hash(
    docker_engine: docker.DockerClient, harness_images: tuple[list[ImageInfo], list[str]]
) -> None:
    built, _ = harness_images
    assert [image.tag for image in built] == [BASE_TAG, *(spec.tag for spec in IMAGES)]
    for image in built:
        labels = docker_engine.images.get(image.tag).labels
        assert labels[INPUTS_LABEL] == image.inputs != ""


def test_second_build_skips_unchanged_images(
    harness_images: tuple[list[ImageInfo], list[str]],
) -> None:
    first, _ = harness_images
    progress: list[str] = []
    again = build_images(BuildOptions(offline=True), progress.append)
    text = "\n".join(progress)
    assert f"base: {BASE_TAG} is up to date" in text
    assert f"{PYTHON.tag}: up to date" in text
    # The harness sources can change under a running test session (other work in the tree);
    # the base and the dependency image cannot.
    assert [i.id for i in again[:2]] == [i.id for i in first[:2]]


def test_arm_image_runs_the_harness_and_the_sdks(
    docker_engine: docker.DockerClient, harness_images: object
) -> None:
    script = (
        "import sys, json, harness, anthropic, openai, proxy, stubs, arms;"
        "print(json.dumps({'python': list(sys.version_info[:2]), "
        "'anthropic': anthropic.__version__, 'openai': openai.__version__}))"
    )
    out = run_in(docker_engine, ARM.tag, ["python3", "-c", script], network_mode="none")
    facts = json.loads(out.strip().splitlines()[-1])
    # The images' Python (trixie's 3.13) and the very SDK versions the host's .venv tests.
    assert facts["python"] == list(IMAGE_PYTHON)
    assert (facts["anthropic"], facts["openai"]) == (anthropic.__version__, openai.__version__)


def test_arm_image_trusts_the_harness_proxy_ca_with_no_environment(
    docker_engine: docker.DockerClient, harness_images: object
) -> None:
    """Engines that pass neither SSL_CERT_FILE nor a bundle still accept the proxy's TLS: the CA
    is in the system store (OpenSSL's default paths) and in certifi's bundle."""
    cert = ensure_ca()
    script = (
        "import ssl, certifi, json;"
        "system = [dict(x[0] for x in c['subject']) for c in "
        "ssl.create_default_context().get_ca_certs()];"
        "print(json.dumps({'system': system, 'certifi': open(certifi.where()).read()}))"
    )
    out = run_in(docker_engine, ARM.tag, ["python3", "-c", script], network_mode="none")
    facts = json.loads(out.strip().splitlines()[-1])
    assert {"commonName": "harness proxy CA", "organizationName": "harness"} in facts["system"]
    assert cert.read_text().strip() in facts["certifi"]
    labels = docker_engine.images.get(ARM.tag).labels
    assert labels["harness.ca.sha256"] == fingerprint(cert)


def test_libfaketime_pins_wall_clock_and_leaves_monotonic(
    docker_engine: docker.DockerClient, harness_images: object, tmp_path: Path
) -> None:
    env = docker_engine.images.get(ARM.tag).attrs["Config"]["Env"]
    preload = dict(item.split("=", 1) for item in env)["HARNESS_FAKETIME_PRELOAD"]
    assert preload.endswith("/faketime/libfaketime.so.1")
    clock = tmp_path / "clock"
    clock.mkdir()
    (clock / "faketime").write_text("@2024-05-01 10:00:00\n")
    # The timestamp file is re-read on every call (FAKETIME_NO_CACHE): changing it mid-process
    # moves the clock, which is how one arm process can serve items with different dates.
    script = """
import datetime, json, time
m0, t0 = time.monotonic(), time.time()
now = datetime.datetime.now().isoformat()
time.sleep(0.5)
m1, t1 = time.monotonic(), time.time()
open('/clock/faketime', 'w').write('@2031-01-02 03:04:05\\n')
t2 = time.time()
print(json.dumps({'t0': t0, 't1': t1, 't2': t2, 'now': now, 'mono': m1 - m0}))
"""
    out = run_in(
        docker_engine,
        ARM.tag,
        ["python3", "-c", script],
        network_mode="none",
        volumes={str(clock): {"bind": "/clock", "mode": "rw"}},
        environment={
            "LD_PRELOAD": preload,
            "FAKETIME_TIMESTAMP_FILE": "/clock/faketime",
            "FAKETIME_NO_CACHE": "1",
            "DONT_FAKE_MONOTONIC": "1",
        },
    )
    seen = json.loads(out.strip().splitlines()[-1])
    pinned = datetime.datetime(2024, 5, 1, 10, 0, 0, tzinfo=datetime.UTC).timestamp()
    assert pinned - 1 <= seen["t0"] < pinned + 30
    assert seen["now"].startswith("2024-05-01T10:00")
    assert 0.45 <= seen["mono"] < 5
    assert 0.45 <= seen["t1"] - seen["t0"] < 5  # the pinned clock still runs forward
    later = datetime.datetime(2031, 1, 2, 3, 4, 5, tzinfo=datetime.UTC).timestamp()
    assert later - 1 <= seen["t2"] < later + 30


def test_internal_network_cannot_reach_a_server_on_another_network(
    docker_engine: docker.DockerClient, harness_images: object, cleanup: list[Container | Network]
) -> None:
    tag = uuid.uuid4().hex[:8]
    server_net = docker_engine.networks.create(f"harness-test-srv-{tag}", labels=TEST_LABEL)
    cleanup.append(server_net)
    arm_net = docker_engine.networks.create(
        f"harness-test-arm-{tag}", internal=True, labels=TEST_LABEL
    )
    cleanup.append(arm_net)
    server = docker_engine.containers.run(
        ARM.tag,
        ["python3", "-m", "http.server", "8000"],
        name=f"harness-test-server-{tag}",
        network=server_net.name,
        labels=TEST_LABEL,
        detach=True,
    )
    cleanup.append(server)
    server.reload()
    address = server.attrs["NetworkSettings"]["Networks"][server_net.name]["IPAddress"]
    assert address
    # argv[1]: tries per target (a positive control retries while the server starts; the
    # blocked probe needs one, a refused or timed-out connect is the answer); argv[2:]: hosts.
    probe = """
import socket, sys, time
results = []
for host in sys.argv[2:]:
    outcome = 'never-tried'
    for _ in range(int(sys.argv[1])):
        try:
            socket.create_connection((host, 8000), timeout=3).close()
            outcome = 'open'
            break
        except OSError as e:
            outcome = type(e).__name__
            time.sleep(0.25)
    results.append(outcome)
print(' '.join(results))
"""
    # Positive control: from the server's own network the server answers, by address and by
    # name, so a failure from the internal network means blocked, not down.
    same = run_in(
        docker_engine,
        ARM.tag,
        ["python3", "-c", probe, "40", address, server.name],
        network=server_net.name,
    )
    assert same.split() == ["open", "open"]
    # By address only: a name lookup from the internal network would be a DNS query that the
    # engine may try to forward off the machine.
    blocked = run_in(
        docker_engine, ARM.tag, ["python3", "-c", probe, "1", address], network=arm_net.name
    )
    assert blocked.split() != ["open"], blocked
    assert blocked.split()[0] in {"TimeoutError", "OSError", "ConnectionRefusedError"}, blocked


def test_proxy_image_answers_an_sdk_call_from_an_arm_container(
    docker_engine: docker.DockerClient, harness_images: object, cleanup: list[Container | Network]
) -> None:
    tag = uuid.uuid4().hex[:8]
    net = docker_engine.networks.create(f"harness-test-arm-{tag}", internal=True, labels=TEST_LABEL)
    cleanup.append(net)
    proxy = docker_engine.containers.run(
        PROXY.tag,
        ["--run-dir", "/tmp/run", "--arm", "probe"],
        name=f"harness-test-proxy-{tag}",
        network=net.name,
        labels=TEST_LABEL,
        detach=True,
    )
    cleanup.append(proxy)
    script = f"""
import time, openai
client = openai.OpenAI(base_url='http://{proxy.name}:8080/openai/v1', api_key='placeholder',
                       max_retries=0, timeout=5)
for _ in range(120):  # the proxy takes a few seconds to start
    try:
        reply = client.chat.completions.create(
            model='gpt-4o-mini', messages=[{{'role': 'user', 'content': 'hello there'}}])
        break
    except openai.APIConnectionError:
        time.sleep(0.5)
print(reply.choices[0].message.content)
"""
    out = run_in(docker_engine, ARM.tag, ["python3", "-c", script], network=net.name)
    assert out.strip(), "the stub reply is empty"
    proxy.reload()
    assert proxy.status == "running"
