"""Building the Docker images arms and the proxy run in, offline.

The chain is base -> harness-python -> harness-arm / harness-proxy. Each image carries a
`harness.inputs` label, a hash of everything that went into it (Dockerfile, pinned wheels or
harness sources, the parent image's id), and is skipped when an image with the same label exists.

This drives the docker CLI rather than the docker SDK: the offline base is a shell pipeline
(`debootstrap | docker import`) that needs the CLI anyway, `docker build` streams the progress a
person would see by hand and applies .dockerignore exactly as a manual build does, and so a failed
build can be rerun by hand from the command line printed in the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from harness.errors import HarnessError
from harness.images.engines import ENGINE_IMAGES, build_extras
from harness.images.image import (
    ARM,
    BASE_TAG,
    IMAGES,
    PROXY,
    PYTHON,
    DockerCLI,
    ImageInfo,
    ImageSpec,
    build_one,
    folder_text,
    repo_root,
    stream_build,
)
from harness.images.wheelhouse import (
    Log,
    build_harness_wheel,
    fill_wheelhouse,
    lock_requirements,
    sha256_text,
    source_hash,
)
from harness.isolation import compile_sleepfix, ensure_ca, fingerprint


@dataclass(frozen=True)
class BuildOptions:
    offline: bool = False
    force: bool = False
    base: str | None = None  # a registry image such as python:3.13-slim-trixie
    # Images built only when asked (harness/images/engines.py): mem0, graphiti, node, "engines".
    extras: tuple[str, ...] = ()


def ensure_base(docker: DockerCLI, root: Path, options: BuildOptions, log: Log) -> ImageInfo:
    """The base image: a registry image when asked for and reachable, else the offline build."""
    if options.base and options.base != BASE_TAG and not options.offline:
        found = docker.inspect(options.base)
        if found and not options.force:
            log(f"base: {options.base} present")
            return found
        if docker.pull(options.base, log) and (found := docker.inspect(options.base)):
            return found
        log("base: no registry answers; building the offline base instead")
    elif options.base and options.base != BASE_TAG:
        log(f"base: --offline given, so {options.base} is not used")
    cmd = ["bash", str(root / "images" / "base" / "build-offline.sh")]
    if options.force:
        cmd.append("--force")
    cmd.append(BASE_TAG)
    stream_build(cmd, root / ".cache" / "logs" / "base.log", log, prefix="")
    found = docker.inspect(BASE_TAG)
    if found is None:
        raise HarnessError(f"the offline base build left no {BASE_TAG} image")
    return found


def stage_ca_cert(cache: Path) -> Path:
    """The harness CA's public certificate, as `harness-ca.pem` for the arm image's context."""
    staged = cache / "harness-ca.pem"
    staged.write_bytes(ensure_ca().read_bytes())
    return staged


def build_images(
    options: BuildOptions, log: Log, docker: DockerCLI | None = None, root: Path | None = None
) -> list[ImageInfo]:
    """Wheelhouse, base, python, arm and proxy images; each skipped if its inputs are unchanged."""
    docker = docker or DockerCLI()
    root = root or repo_root()
    cache = root / ".cache"
    cache.mkdir(exist_ok=True)
    if not (cache / ".gitignore").exists():
        (cache / ".gitignore").write_text("*\n")
    log(f"docker engine {docker.server_version()}")
    # One build at a time per checkout: two (a test fixture and a user's command) would clear
    # each other's staging folders and contexts under .cache.
    lock = FileLock(str(cache / "images.lock"))
    try:
        lock.acquire(timeout=1)
    except Timeout:
        log("another `harness images build` runs in this checkout; waiting for it")
        lock.acquire(timeout=3600)
    try:
        return _build_all(docker, root, cache, options, log)
    finally:
        lock.release()


def _build_all(
    docker: DockerCLI, root: Path, cache: Path, options: BuildOptions, log: Log
) -> list[ImageInfo]:
    wheelhouse = cache / "wheelhouse"
    requirements = wheelhouse / "requirements.txt"
    requirements_text = lock_requirements(root, requirements, log)
    base = ensure_base(docker, root, options, log)

    def python_files() -> list[Path]:
        # Only fetched when the python image is rebuilt: a fresh clone on a machine that has the
        # images skips a minute of downloads.
        fill_wheelhouse(root, wheelhouse, requirements_text, log)
        return [requirements, *sorted(wheelhouse.glob("*.whl"))]

    python = build_one(
        docker,
        root,
        PYTHON,
        inputs=sha256_text(folder_text(root, PYTHON), sha256_text(requirements_text), base.id),
        files=python_files,
        build_args={"BASE": base.tag},
        force=options.force,
        log=log,
    )
    built = [base, python]
    sources = source_hash(root)
    # The harness CA goes into the arm image's trust stores (engines that hard-code vendor hosts
    # reach the proxy through HTTPS_PROXY); a new CA is a new input, so the image follows it.
    ca_cert = stage_ca_cert(cache)
    ca_sha256 = fingerprint(ca_cert)
    for spec in (ARM, PROXY):

        def harness_files(spec: ImageSpec = spec) -> list[Path]:
            wheel, _ = build_harness_wheel(root, cache, log)
            return [wheel, compile_sleepfix(root, cache), ca_cert] if spec is ARM else [wheel]

        built.append(
            build_one(
                docker,
                root,
                spec,
                inputs=sha256_text(
                    folder_text(root, spec), sources, python.id, *([ca_sha256] * (spec is ARM))
                ),
                files=harness_files,
                build_args={"PYTHON_IMAGE": PYTHON.tag}
                | ({"HARNESS_CA_SHA256": ca_sha256} if spec is ARM else {}),
                force=options.force,
                log=log,
            )
        )
    if options.extras:
        arm = next(image for image in built if image.tag == ARM.tag)
        built += build_extras(
            docker, root, cache, options.extras, requirements_text, arm, options.force, log
        )
    return built


def list_images(docker: DockerCLI | None = None) -> list[ImageInfo | ImageSpec]:
    """The harness images as they are now; a spec stands for one not built yet."""
    docker = docker or DockerCLI()
    docker.server_version()
    rows: list[ImageInfo | ImageSpec] = []
    for spec in (ImageSpec("base", BASE_TAG), *IMAGES):
        rows.append(docker.inspect(spec.tag) or spec)
    # The engine images are built on request: shown when present.
    rows += [found for spec in ENGINE_IMAGES if (found := docker.inspect(spec.tag))]
    return rows
