"""The docker backend's clock pinning, read from real images (harness/isolation/docker/clock.py).

Images are made with `docker commit --change ENV ...` from a container of an image already on
the machine (no build): one that preloads libfaketime as harness-arm does, one that names an
empty preload, and the base itself, which names none. A whole `harness record` run then checks
that run.json says what those images decide.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from ruamel.yaml import YAML

from harness.images.image import ARM, PYTHON
from harness.isolation.docker.clock import PRELOAD_ENV, clock_pinning_for, faketime_preload
from tests.helpers.studies import harness, header, only_run, read_jsonl
from tests.study_builder import StudyBuilder

REPO = Path(__file__).resolve().parents[2]

LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
PINNED_PRELOAD = f"/usr/local/lib/harness/sleepfix.so:{LIBFAKETIME}"


@pytest.fixture(scope="module")
def clock_images(docker_engine: docker.DockerClient) -> Iterator[dict[str, str]]:
    """name -> image tag: `pinned`, `empty` and `none` (the base, without the variable)."""
    base = next(
        (
            image
            for image in docker_engine.images.list()
            if image.tags
            and not any(e.startswith(PRELOAD_ENV) for e in image.attrs["Config"]["Env"] or [])
        ),
        None,
    )
    if base is None:
        pytest.skip("no image without HARNESS_FAKETIME_PRELOAD on this machine to commit from")
    container = docker_engine.containers.create(base.tags[0], command=["true"])
    made: dict[str, str] = {"none": base.tags[0]}
    try:
        for name, value in (("pinned", PINNED_PRELOAD), ("empty", "")):
            tag = f"harness-test-clock-{name}-{uuid.uuid4().hex[:8]}"
            container.commit(repository=tag, tag="latest", changes=[f"ENV {PRELOAD_ENV}={value}"])
            made[name] = f"{tag}:latest"
    finally:
        container.remove()
    yield made
    for name in ("pinned", "empty"):
        if name in made:
            docker_engine.images.remove(made[name], force=True)


def test_the_preload_is_the_images_own(clock_images: dict[str, str]) -> None:
    assert faketime_preload(clock_images["pinned"]) == PINNED_PRELOAD
    assert faketime_preload(clock_images["empty"]) == ""
    assert faketime_preload(clock_images["none"]) == ""


@pytest.mark.parametrize(
    ("arms", "pinning"),
    [
        (["pinned"], "libfaketime"),
        (["pinned", "pinned"], "libfaketime"),
        (["none"], "seam-only"),  # the defect: recorded as libfaketime, the clock was real
        (["pinned", "none"], "seam-only"),  # one unpinned arm makes the run's claim false
        (["empty", "pinned"], "seam-only"),
    ],
)
def test_a_run_is_pinned_only_when_every_arms_image_preloads_libfaketime(
    clock_images: dict[str, str], arms: list[str], pinning: str
) -> None:
    assert clock_pinning_for(clock_images[arm] for arm in arms) == pinning


def test_an_image_that_is_not_there_is_not_pinned(clock_images: dict[str, str]) -> None:
    missing = f"harness-test-clock-missing-{uuid.uuid4().hex[:8]}:latest"
    assert clock_pinning_for([clock_images["pinned"], missing]) == "seam-only"


@pytest.mark.integration
@pytest.mark.timeout(600)
def test_a_run_with_one_arm_on_an_image_without_the_preload_records_seam_only(
    images: None, tmp_path: Path
) -> None:
    """The repository's compose.yaml with `retrieval` on harness-python (Python and the SDKs, no
    HARNESS_FAKETIME_PRELOAD, so that arm reads the real clock) and `bare` still on harness-arm:
    the run's header must not claim libfaketime. (The quickstart on harness-arm alone records
    libfaketime: tests/docker/test_docker_backend.py.)"""
    assert faketime_preload(PYTHON.tag) == ""
    assert "libfaketime" in faketime_preload(ARM.tag)
    study = tmp_path / "study"
    study.mkdir()
    compose = YAML(typ="safe").load((REPO / "compose.yaml").read_text())
    compose["services"]["retrieval"]["image"] = PYTHON.tag
    YAML(typ="safe").dump(compose, study / "compose.yaml")
    builder = StudyBuilder(name="unpinned", arms=["bare", "retrieval"])
    path = builder.set(deadline_ms=60000, ledger="ledger.jsonl").write(study)
    runs = tmp_path / "runs"
    done = harness("record", str(path), "--isolation", "docker", "--run-dir", str(runs))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    run_dir = only_run(runs)
    recorded = header(run_dir)["study"]
    assert recorded["isolation"] == "docker", recorded["isolation_reason"]
    assert recorded["clock_pinning"] == "seam-only"
    # Both arms ran their turn: the header describes a run that happened, not one refused.
    turns = read_jsonl(run_dir / "turns.jsonl")
    assert sorted((t["arm"], t["outcome"]) for t in turns) == [
        ("bare", "done"),
        ("retrieval", "done"),
    ]
