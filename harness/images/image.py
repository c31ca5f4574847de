"""One harness image: its spec and tag, the docker CLI that builds and inspects it, and the build of
one image from its folder under images/, skipped when an image with the same inputs exists.

build.py chains the harness images (base -> python -> arm / proxy) and engines.py the engine
images; both build each image here, so neither imports the other's internals.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.images.wheelhouse import (
    Log,
    link_files,
)
from harness.isolation.docker import cli as docker_cli

BASE_TAG = "harness-base:trixie"
INPUTS_LABEL = "harness.inputs"
IMAGE_LABEL = "harness.image"
ENSURE_HINT = docker_cli.ENSURE_HINT


@dataclass(frozen=True)
class ImageSpec:
    name: str  # folder under images/ and the harness.image label
    tag: str
    folder: str = ""  # images/<folder>/ when several images share one Dockerfile (the engines)

    @property
    def source(self) -> str:
        return self.folder or self.name


PYTHON = ImageSpec("python", "harness-python")
ARM = ImageSpec("arm", "harness-arm")
PROXY = ImageSpec("proxy", "harness-proxy")
IMAGES = (PYTHON, ARM, PROXY)


@dataclass(frozen=True)
class ImageInfo:
    tag: str
    id: str
    inputs: str
    created: str
    size_mb: float


def repo_root() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "images" / "python" / "Dockerfile").is_file():
        raise HarnessError(
            f"no images/ folder next to the harness package ({root})",
            hint="run `harness images build` from a clone of the harness repository",
        )
    return root


class DockerCLI:
    """The few docker commands the image build needs, with errors that say what to do; run through
    the one Docker CLI wrapper (harness/isolation/docker/cli.py)."""

    def __init__(self, binary: str = "docker") -> None:
        self.binary = binary

    def run(
        self, args: Sequence[str], timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        try:
            return docker_cli.run(args, timeout=timeout, binary=self.binary)
        except docker_cli.DockerError as e:
            raise HarnessError(str(e), hint=ENSURE_HINT) from e

    def server_version(self) -> str:
        proc = self.run(["version", "--format", "{{.Server.Version}}"], timeout=20)
        if proc.returncode != 0 or not proc.stdout.strip():
            detail = (proc.stderr.strip().splitlines() or ["no answer"])[-1]
            raise HarnessError(f"no Docker engine answers ({detail})", hint=ENSURE_HINT)
        return proc.stdout.strip()

    def inspect(self, ref: str) -> ImageInfo | None:
        fmt = '{{.Id}}|{{ index .Config.Labels "' + INPUTS_LABEL + '" }}|{{.Created}}|{{.Size}}'
        proc = self.run(["image", "inspect", "--format", fmt, ref], timeout=30)
        if proc.returncode != 0:
            return None
        image_id, inputs, created, size = proc.stdout.strip().split("|")
        inputs = "" if inputs == "<no value>" else inputs
        return ImageInfo(ref, image_id, inputs, created[:19], int(size) / 1e6)

    def pull(self, ref: str, log: Log) -> bool:
        log(f"base: pulling {ref}")
        proc = self.run(["pull", "--quiet", ref], timeout=300)
        if proc.returncode != 0:
            log(f"base: pull failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
        return proc.returncode == 0

    def _buildkit_env(self) -> dict[str, str]:
        env = dict(os.environ)
        if "DOCKER_BUILDKIT" not in env:
            # Machines here ship the CLI without the buildx plugin; the classic builder needs none.
            buildx = self.run(["buildx", "version"], timeout=20)
            env["DOCKER_BUILDKIT"] = "1" if buildx.returncode == 0 else "0"
        return env

    def build(
        self,
        context: Path,
        tag: str,
        *,
        build_args: dict[str, str],
        labels: dict[str, str],
        log_file: Path,
        log: Log,
    ) -> None:
        cmd = [self.binary, "build", "--tag", tag, "--progress=plain"]
        env = self._buildkit_env()
        if env["DOCKER_BUILDKIT"] == "0":
            cmd.remove("--progress=plain")  # a BuildKit-only flag
        for key, value in build_args.items():
            cmd += ["--build-arg", f"{key}={value}"]
        for key, value in labels.items():
            cmd += ["--label", f"{key}={value}"]
        cmd.append(str(context))
        stream_build(cmd, log_file, log, prefix=f"{tag}: ", env=env, step_only=True)


def stream_build(
    cmd: list[str],
    log_file: Path,
    log: Log,
    *,
    prefix: str,
    env: dict[str, str] | None = None,
    step_only: bool = False,
) -> None:
    """Run cmd, keep its whole output in log_file, show the step lines as progress."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("w") as sink:
        sink.write("$ " + " ".join(cmd) + "\n")
        sink.flush()
        with subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                sink.write(line)
                text = line.rstrip()
                if not step_only or text.startswith("Step ") or _is_buildkit_step(text):
                    log(prefix + text)
            code = proc.wait()
    if code != 0:
        tail = "\n".join(log_file.read_text().splitlines()[-20:])
        raise HarnessError(
            f"{prefix.rstrip(': ')} failed (exit {code}); last lines of {log_file}:\n{tail}"
        )


def _is_buildkit_step(text: str) -> bool:
    return text.startswith("#") and "[" in text


def _stage_context(root: Path, spec: ImageSpec, cache: Path, files: list[Path]) -> Path:
    """A build context holding the Dockerfile, its .dockerignore and the given files only."""
    context = cache / "build" / spec.name
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    source = root / "images" / spec.source
    for name in ("Dockerfile", ".dockerignore"):
        shutil.copy2(source / name, context / name)
    link_files(files, context)
    return context


def folder_text(root: Path, spec: ImageSpec) -> str:
    """Every file of images/<name>/ (Dockerfile, .dockerignore, sources), for the inputs hash."""
    folder = root / "images" / spec.source
    return "".join(
        f"{path.name}\0{path.read_text()}\0" for path in sorted(folder.iterdir()) if path.is_file()
    )


def build_one(
    docker: DockerCLI,
    root: Path,
    spec: ImageSpec,
    *,
    inputs: str,
    files: Callable[[], list[Path]],
    build_args: dict[str, str],
    force: bool,
    log: Log,
) -> ImageInfo:
    cache = root / ".cache"
    current = docker.inspect(spec.tag)
    if current and current.inputs == inputs and not force:
        log(f"{spec.tag}: up to date (inputs {inputs}); skipped")
        return current
    log(f"{spec.tag}: building (inputs {inputs})")
    started = time.monotonic()
    context = _stage_context(root, spec, cache, files())
    docker.build(
        context,
        spec.tag,
        build_args=build_args,
        labels={INPUTS_LABEL: inputs, IMAGE_LABEL: spec.name},
        log_file=cache / "logs" / f"{spec.name}.log",
        log=log,
    )
    shutil.rmtree(context, ignore_errors=True)
    built = docker.inspect(spec.tag)
    if built is None:
        raise HarnessError(f"docker build reported success but {spec.tag} is missing")
    if current and current.id != built.id:
        # The superseded image; refused (and left) when a container or a child image uses it.
        docker.run(["image", "rm", current.id], timeout=60)
    log(f"{spec.tag}: built in {time.monotonic() - started:.0f}s ({built.size_mb:.0f} MB)")
    return built
