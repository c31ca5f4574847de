"""The wheelhouse the images install from: no image build ever reaches a package index.

Two parts, cached under `.cache/` of the repo:
- third-party wheels (`.cache/wheelhouse/`): the project's runtime dependencies, resolved by plain
  pip for the images' Python (Debian trixie's 3.13) and constrained to the versions in `.venv`, so
  containers run what the host tests ran. The resolving and fetching is done by `.venv`'s own pip,
  which therefore must be that Python too (scripts/bootstrap makes it so where a 3.12+ exists):
  pip picks wheels, and evaluates markers, for the interpreter it runs on. They are installed
  with `--no-deps`: the set is already resolved, and the image needs no index to check it.
- the harness wheel (`.cache/harness-wheel/<source hash>/`): built from a copy of the packages, so
  the build never writes `build/` or egg-info into the work tree.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

from harness.errors import HarnessError

Log = Callable[[str], None]

# What goes into the harness wheel; its hash decides when the wheel (and the images) are rebuilt.
PACKAGE_DIRS = ("harness", "proxy", "stubs", "ledger", "arms", "rundir", "vendors", "canonical")
PROJECT_FILES = ("pyproject.toml", "README.md")
# The images' python3 (images/base/build-offline.sh: Debian trixie); the wheels are built for it.
IMAGE_PYTHON = (3, 13)


def sha256_text(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def source_hash(root: Path) -> str:
    """Hash of every file that goes into the harness wheel (paths and bytes)."""
    digest = hashlib.sha256()
    for path in _source_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _source_files(root: Path) -> list[Path]:
    files = [root / name for name in PROJECT_FILES if (root / name).is_file()]
    for package in PACKAGE_DIRS:
        for path in sorted((root / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.append(path)
    return files


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise HarnessError(
            f"{what} failed ({' '.join(cmd[:4])} ...):\n{tail}",
            hint="check that PyPI answers (pip needs it to fill the wheelhouse)",
        )
    return proc.stdout


# What image_pip asks .venv's interpreter: its minor version and whether it has pip.
_PROBE = (
    "import sys, importlib.util as u;"
    "print('%d.%d' % sys.version_info[:2], bool(u.find_spec('pip')))"
)


def image_pip(root: Path) -> list[str]:
    """`.venv`'s pip, refused unless `.venv` runs the images' Python: the wheels it picks and the
    pins it reads must be the ones the containers run."""
    python = root / ".venv" / "bin" / "python"
    want = ".".join(map(str, IMAGE_PYTHON))
    hint = f"run scripts/bootstrap with a Python {want} (PYTHON=/path/to/python{want})"
    if not python.exists():
        raise HarnessError(f"no .venv in {root} to pin the images' packages to", hint=hint)
    probe = subprocess.run(
        [str(python), "-c", _PROBE], capture_output=True, text=True, timeout=60
    ).stdout.split()
    have, has_pip = (probe[0], probe[1] == "True") if len(probe) == 2 else ("unknown", False)
    if have != want or not has_pip:
        found = f"Python {have}" if have != want else "without pip (made by uv)"
        raise HarnessError(
            f"the images run Python {want} and their wheels are resolved by .venv's pip, "
            f"but .venv is {found}",
            hint=hint,
        )
    return [str(python), "-m", "pip"]


def _resolve(pip: list[str], requirements: Path, constraints: Path, what: str) -> str:
    """Plain pip's resolution of `requirements` under `constraints`, as sorted `name==version`
    lines: every package of the set, also those already installed (--ignore-installed)."""
    report = constraints.parent / "resolved.json"  # beside the constraints, under .cache/
    _run(
        [
            *pip,
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "-r",
            str(requirements),
            "-c",
            str(constraints),
        ],
        f"resolving {what}",
    )
    installs = json.loads(report.read_text())["install"]
    report.unlink()
    pins = sorted(f"{item['metadata']['name']}=={item['metadata']['version']}" for item in installs)
    return "\n".join(pins) + "\n"


def lock_requirements(root: Path, out: Path, log: Log) -> str:
    """Resolve the runtime dependencies (no dev tools) to pins; returns the pinned text."""
    pip = image_pip(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    constraints = out.parent / "venv-constraints.txt"
    frozen = _run([*pip, "freeze", "--exclude-editable"], "pip freeze of .venv")
    # Direct-URL lines (a package installed from a folder) cannot be constraints.
    pins = [line for line in frozen.splitlines() if "==" in line and " @ " not in line]
    constraints.write_text("\n".join(pins) + "\n")
    # pyproject's dependencies, not the project itself: resolving the project would build its
    # metadata in the work tree.
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    requirements = out.parent / "runtime.in"
    # The `postgres` extra too: a live proxy in a container writes a postgresql:// ledger itself.
    wanted = [*pyproject["project"]["dependencies"]]
    wanted += pyproject["project"]["optional-dependencies"].get("postgres", [])
    requirements.write_text("\n".join(wanted) + "\n")
    # Resolving asks PyPI (seconds); skip it while nothing it depends on has changed.
    key = sha256_text(requirements.read_text(), constraints.read_text(), *pip)
    stamp = out.with_suffix(".inputs")
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        log("wheelhouse: runtime dependencies unchanged")
        return out.read_text()
    log("wheelhouse: resolving runtime dependencies (pip, pinned to .venv)")
    out.write_text(_resolve(pip, requirements, constraints, "the runtime dependencies"))
    stamp.write_text(key)
    return out.read_text()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _pins(text: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[_normal(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return pins


def _wheel_key(wheel: Path) -> tuple[str, str]:
    name, version = wheel.name.split("-")[:2]
    return _normal(name), version


def fill_wheelhouse(root: Path, directory: Path, requirements_text: str, log: Log) -> None:
    """Fetch (or build) a wheel for every pin not yet in `directory`; drop wheels no pin names.
    `.venv`'s pip does it, so the wheels are for the images' Python (image_pip)."""
    pins = _pins(requirements_text)
    have = {_wheel_key(w): w for w in directory.glob("*.whl")}
    for key, wheel in have.items():
        if pins.get(key[0]) != key[1]:
            wheel.unlink()
    missing = [f"{n}=={v}" for n, v in sorted(pins.items()) if (n, v) not in have]
    if not missing:
        log(f"wheelhouse: {len(pins)} wheels cached in {directory}")
        return
    log(f"wheelhouse: fetching {len(missing)} of {len(pins)} wheels (pip wheel)")
    started = time.monotonic()
    pip = image_pip(root)
    request = directory / "missing.txt"
    request.write_text("\n".join(missing) + "\n")
    _run(
        [*pip, "wheel", "--quiet", "--no-deps", "-r", str(request), "-w", str(directory)],
        "pip wheel",
    )
    request.unlink()
    log(f"wheelhouse: fetched in {time.monotonic() - started:.0f}s")
    now = {_wheel_key(w) for w in directory.glob("*.whl")}
    still = [p for p in missing if tuple(p.split("==", 1)) not in now]
    if still:
        raise HarnessError(f"the wheelhouse lacks {', '.join(still)} after pip wheel")


def build_harness_wheel(root: Path, cache: Path, log: Log) -> tuple[Path, str]:
    """The harness wheel for the current sources, rebuilt only when they change."""
    digest = source_hash(root)
    out = cache / "harness-wheel" / digest
    wheels = sorted(out.glob("harness-*.whl"))
    if wheels:
        log(f"wheelhouse: harness wheel up to date (sources {digest})")
        return wheels[0], digest
    log(f"wheelhouse: building the harness wheel (sources {digest})")
    shutil.rmtree(cache / "harness-wheel", ignore_errors=True)
    staging = cache / "harness-src"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in _source_files(root):
        target = staging / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    _run(
        [*image_pip(root), "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(staging)],
        "building the harness wheel",
    )
    shutil.rmtree(staging, ignore_errors=True)
    wheels = sorted(out.glob("harness-*.whl"))
    if not wheels:
        raise HarnessError(f"pip wheel left no harness wheel in {out}")
    return wheels[0], digest


def link_files(files: Iterable[Path], into: Path) -> None:
    """Hard-link (or copy across file systems) files into a build context."""
    into.mkdir(parents=True, exist_ok=True)
    for path in files:
        target = into / path.name
        if target.exists():
            target.unlink()
        try:
            target.hardlink_to(path)
        except OSError:
            shutil.copy2(path, target)


def lock_extra(root: Path, requirements_in: Path, base_text: str, out: Path, log: Log) -> str:
    """Pins for an image's extra packages (an engine's `requirements.in`), resolved on top of
    the base image's pins: what the base already has keeps its version (it is installed), and
    only the packages it lacks are returned, to install `--no-deps` in the image."""
    pip = image_pip(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    constraints = out.parent / "base-constraints.txt"
    constraints.write_text(base_text)
    key = sha256_text(requirements_in.read_text(), base_text, *pip)
    stamp = out.with_suffix(".inputs")
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        log(f"wheelhouse: {requirements_in.parent.name} packages unchanged")
        return out.read_text()
    log(f"wheelhouse: resolving {requirements_in.parent.name} packages (pip)")
    resolved = _resolve(pip, requirements_in, constraints, str(requirements_in))
    base = _pins(base_text)
    extra = [f"{name}=={version}" for name, version in _pins(resolved).items() if name not in base]
    out.write_text("\n".join(sorted(extra)) + "\n")
    stamp.write_text(key)
    return out.read_text()
