"""The docker backend's clock pinning, read from real images (harness/isolation/docker_clock.py).

Images are made with `docker commit --change ENV ...` from a container of an image already on
the machine (no build): one that preloads libfaketime as harness-arm does, one that names an
empty preload, and the base itself, which names none.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import docker
import pytest

from harness.isolation.docker_clock import PRELOAD_ENV, clock_pinning_for, faketime_preload

LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
PINNED_PRELOAD = f"/usr/local/lib/harness/sleepfix.so:{LIBFAKETIME}"


@pytest.fixture(scope="module")
def images(docker_engine: docker.DockerClient) -> Iterator[dict[str, str]]:
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


def test_the_preload_is_the_images_own(images: dict[str, str]) -> None:
    assert faketime_preload(images["pinned"]) == PINNED_PRELOAD
    assert faketime_preload(images["empty"]) == ""
    assert faketime_preload(images["none"]) == ""


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
    images: dict[str, str], arms: list[str], pinning: str
) -> None:
    assert clock_pinning_for(images[arm] for arm in arms) == pinning


def test_an_image_that_is_not_there_is_not_pinned(images: dict[str, str]) -> None:
    missing = f"harness-test-clock-missing-{uuid.uuid4().hex[:8]}:latest"
    assert clock_pinning_for([images["pinned"], missing]) == "seam-only"
