"""`--isolation`: the backend a run gets; for `auto`, docker when this machine can run the study
in containers, else local.

Docker is the isolation the study's fairness claims rest on, so auto takes it whenever it can
work: an engine answers, the harness can set its egress rules (root, iptables), every image the
study needs is built, and every arm's command can run inside a container (the docker backend
mounts the study folder and the harness sources, nothing else of the host). Otherwise auto runs
local and says which condition failed and how to meet it; the run header records the choice.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import structlog

from harness.isolation.base import Isolation, IsolationBackend
from harness.isolation.docker import (
    DockerBackend,
    DockerError,
    compose_images,
    docker,
    engine_answers,
    require_engine,
)
from harness.isolation.local import LocalBackend
from harness.study import Study

log = structlog.get_logger("harness.study")

ARM_IMAGE = "harness-arm"
PROXY_IMAGE = "harness-proxy"


@dataclass(frozen=True)
class Choice:
    isolation: Literal["docker", "local"]
    reason: str


def choose_isolation(study: Study | None) -> Choice:
    if not engine_answers():
        return Choice("local", "no Docker engine answers (scripts/ensure-docker starts one)")
    if os.geteuid() != 0 or shutil.which("iptables") is None:
        return Choice("local", "the docker backend's egress rules need root and iptables")
    missing_tool = host_problem()
    if missing_tool:
        return Choice("local", missing_tool)
    images = compose_images(study.compose_path) if study else {}
    needed = {images.get("proxy", PROXY_IMAGE)}
    needed |= {images.get(arm, ARM_IMAGE) for arm in (study.arms if study else [])}
    missing = sorted(image for image in needed if not _image_exists(image))
    if missing:
        return Choice(
            "local", f"image(s) {', '.join(missing)} not built (harness images build --offline)"
        )
    if study is not None:
        for name, spec in study.arms.items():
            outside = _host_path_outside(spec.command, study.path.parent)
            if outside:
                return Choice(
                    "local",
                    f"arm {name!r} runs {outside}, outside the study folder (containers see "
                    "only the study folder and the harness sources)",
                )
    return Choice("docker", "a Docker engine answers and the study's images are built")


def host_problem(
    loop_control: Path = Path("/dev/loop-control"), kmsg: Path = Path("/dev/kmsg")
) -> str | None:
    """What the docker backend's bounds and evidence need of the host and it lacks: loop
    devices and mkfs.ext4 (each arm's bounded disk), a readable kernel log (the refusals)."""
    if not loop_control.exists() or shutil.which("mkfs.ext4") is None:
        return "the arms' bounded disks need loop devices and mkfs.ext4 (e2fsprogs)"
    if not os.access(kmsg, os.R_OK):
        return f"the docker backend follows the kernel log and cannot read {kmsg}"
    return None


def _image_exists(image: str) -> bool:
    try:
        docker(["image", "inspect", "-f", "{{.Id}}", image], timeout=30)
    except DockerError:
        return False
    return True


def _host_path_outside(command: list[str], folder: Path) -> str | None:
    """The first absolute path in `command` that lies outside `folder`, if any."""
    for word in command:
        if word.startswith("/"):
            path = Path(word)
            if not path.resolve().is_relative_to(folder.resolve()):
                return word
    return None


def make_backend(
    isolation: Isolation, run_dir: Path, study: Study | None = None
) -> IsolationBackend:
    """The backend for `--isolation` (auto: as `choose_isolation` finds), not started: choosing
    is a check (docker must answer), starting is the run's next stage. Made before the run
    starts because its header records the isolation and why."""
    reason = f"--isolation {isolation}"
    if isolation == "auto":
        choice = choose_isolation(study)
        isolation, reason = choice.isolation, f"auto: {choice.reason}"
        log.info("isolation chosen", isolation=isolation, reason=choice.reason)
    backend: IsolationBackend
    if isolation == "docker":
        require_engine()
        backend = DockerBackend(
            run_dir,
            work_dir=study.path.parent if study else None,
            compose=study.compose_path if study else None,
            arms=study.arms if study else (),
        )
    else:
        backend = LocalBackend(run_dir, work_dir=study.path.parent if study else None)
    backend.isolation_reason = reason
    if study is not None:
        backend.limits = study.file.limits
    return backend
