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

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from harness.errors import HarnessError
from harness.images.wheelhouse import (
    Log,
    build_harness_wheel,
    fill_wheelhouse,
    link_files,
    lock_requirements,
    sha256_text,
    source_hash,
)
from harness.isolation.proxy_ca import ensure_ca, fingerprint

BASE_TAG = "harness-base:trixie"
INPUTS_LABEL = "harness.inputs"
IMAGE_LABEL = "harness.image"
ENSURE_HINT = "run scripts/ensure-docker (as root): it installs docker.io and starts dockerd"


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


@dataclass(frozen=True)
class BuildOptions:
    offline: bool = False
    force: bool = False
    base: str | None = None  # a registry image such as python:3.13-slim-trixie
    # Images built only when asked (harness/images/engines.py): mem0, graphiti, node, "engines".
    extras: tuple[str, ...] = ()


def repo_root() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "images" / "python" / "Dockerfile").is_file():
        raise HarnessError(
            f"no images/ folder next to the harness package ({root})",
            hint="run `harness images build` from a clone of the harness repository",
        )
    return root


class DockerCLI:
    """The few docker commands the image build needs, with errors that say what to do."""

    def __init__(self, binary: str = "docker") -> None:
        self.binary = binary

    def run(
        self, args: Sequence[str], timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [self.binary, *args], capture_output=True, text=True, timeout=timeout
            )
        except FileNotFoundError as e:
            raise HarnessError("the docker command is not installed", hint=ENSURE_HINT) from e
        except subprocess.TimeoutExpired as e:
            raise HarnessError(
                f"`docker {' '.join(args)}` did not answer within {timeout:.0f}s", hint=ENSURE_HINT
            ) from e

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
        _stream(cmd, log_file, log, prefix=f"{tag}: ", env=env, step_only=True)


def _stream(
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


def _folder_text(root: Path, spec: ImageSpec) -> str:
    """Every file of images/<name>/ (Dockerfile, .dockerignore, sources), for the inputs hash."""
    folder = root / "images" / spec.source
    return "".join(
        f"{path.name}\0{path.read_text()}\0" for path in sorted(folder.iterdir()) if path.is_file()
    )


def compile_sleepfix(root: Path, cache: Path) -> Path:
    """images/arm/sleepfix.c as a shared object, built by the host's gcc. It links against the
    host's glibc (bookworm's 2.36 here) and asks for nothing newer than the images' (trixie's
    2.41) has, so it loads there (tests/docker/test_images.py)."""
    source = root / "images" / "arm" / "sleepfix.c"
    out = cache / "sleepfix" / sha256_text(source.read_text()) / "sleepfix.so"
    if out.exists():
        return out
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise HarnessError("no C compiler for images/arm/sleepfix.c", hint="apt-get install gcc")
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [gcc, "-O2", "-shared", "-fPIC", "-Wall", "-o", str(out), str(source), "-ldl"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise HarnessError(f"compiling {source.name} failed:\n{proc.stderr.strip()}")
    return out


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
    _stream(cmd, root / ".cache" / "logs" / "base.log", log, prefix="")
    found = docker.inspect(BASE_TAG)
    if found is None:
        raise HarnessError(f"the offline base build left no {BASE_TAG} image")
    return found


def _build_one(
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

    python = _build_one(
        docker,
        root,
        PYTHON,
        inputs=sha256_text(_folder_text(root, PYTHON), sha256_text(requirements_text), base.id),
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
            _build_one(
                docker,
                root,
                spec,
                inputs=sha256_text(
                    _folder_text(root, spec), sources, python.id, *([ca_sha256] * (spec is ARM))
                ),
                files=harness_files,
                build_args={"PYTHON_IMAGE": PYTHON.tag}
                | ({"HARNESS_CA_SHA256": ca_sha256} if spec is ARM else {}),
                force=options.force,
                log=log,
            )
        )
    if options.extras:
        from harness.images.engines import build_extras  # it builds on this module's helpers

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
    from harness.images.engines import ENGINE_IMAGES  # built on request: shown when present

    rows += [found for spec in ENGINE_IMAGES if (found := docker.inspect(spec.tag))]
    return rows
