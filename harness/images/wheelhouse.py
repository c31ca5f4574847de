"""The wheelhouse the images install from: no image build ever reaches a package index.

Two parts, cached under `.cache/` of the repo:
- third-party wheels (`.cache/wheelhouse/`): the project's runtime dependencies, resolved with the
  same `overrides.txt` as `scripts/bootstrap` (mitmproxy 11.0.2 caps h11, the SDKs need h11>=0.16)
  and constrained to the versions in `.venv`, so containers run what the host tests ran. They are
  installed with `--no-deps`, which is how the override survives pip inside the image.
- the harness wheel (`.cache/harness-wheel/<source hash>/`): built from a copy of the packages, so
  the build never writes `build/` or egg-info into the work tree.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from harness.errors import HarnessError

Log = Callable[[str], None]

# What goes into the harness wheel; its hash decides when the wheel (and the images) are rebuilt.
PACKAGE_DIRS = ("harness", "proxy", "stubs", "ledger", "arms", "rundir", "vendors")
PROJECT_FILES = ("pyproject.toml", "README.md")


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
            hint="check that PyPI answers (pip and uv need it to fill the wheelhouse)",
        )
    return proc.stdout


def _uv_compile(
    uv: list[str], root: Path, source: Path, constraints: Path, out: Path, what: str
) -> None:
    """`uv pip compile` for the images' Python (3.11), with overrides.txt and the constraints."""
    _run(
        [
            *uv,
            "pip",
            "compile",
            str(source),
            "--override",
            str(root / "overrides.txt"),
            "--constraint",
            str(constraints),
            "--python-version",
            "3.11",
            "--no-header",
            "--no-annotate",
            "--quiet",
            "--output-file",
            str(out),
        ],
        f"resolving {what}",
    )


def _tool(module: str) -> list[str]:
    """A way to run uv or pip: the venv's project tools lack both, the system Python has them."""
    if module == "uv" and (found := shutil.which("uv")):
        return [found]
    for python in (sys.executable, shutil.which("python3") or "python3"):
        probe = subprocess.run([python, "-m", module, "--version"], capture_output=True)
        if probe.returncode == 0:
            return [python, "-m", module]
    raise HarnessError(
        f"no {module} found to build the wheelhouse",
        hint=f"run `python3 -m pip install {module}` (scripts/bootstrap installs uv)",
    )


def lock_requirements(root: Path, out: Path, log: Log) -> str:
    """Resolve the runtime dependencies (no dev tools) to pins; returns the pinned text."""
    uv = _tool("uv")
    out.parent.mkdir(parents=True, exist_ok=True)
    constraints = out.parent / "venv-constraints.txt"
    venv_python = root / ".venv" / "bin" / "python"
    if venv_python.exists():
        frozen = _run([*uv, "pip", "freeze", "--python", str(venv_python)], "uv pip freeze")
        # Editable and direct-URL lines (the project itself) cannot be constraints.
        pins = [line for line in frozen.splitlines() if "==" in line and " @ " not in line]
        constraints.write_text("\n".join(pins) + "\n")
    else:
        constraints.write_text("")
    # Resolving asks PyPI (seconds); skip it while nothing it depends on has changed.
    key = sha256_text(
        (root / "pyproject.toml").read_text(),
        (root / "overrides.txt").read_text(),
        constraints.read_text(),
    )
    stamp = out.with_suffix(".inputs")
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        log("wheelhouse: runtime dependencies unchanged")
        return out.read_text()
    log("wheelhouse: resolving runtime dependencies (uv, overrides.txt)")
    _uv_compile(uv, root, root / "pyproject.toml", constraints, out, "the runtime dependencies")
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


def fill_wheelhouse(directory: Path, requirements_text: str, log: Log) -> None:
    """Fetch (or build) a wheel for every pin not yet in `directory`; drop wheels no pin names."""
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
    pip = _tool("pip")
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
        [*_tool("uv"), "build", "--wheel", "--quiet", "--out-dir", str(out), str(staging)],
        "building the harness wheel",
    )
    shutil.rmtree(staging, ignore_errors=True)
    wheels = sorted(out.glob("harness-*.whl"))
    if not wheels:
        raise HarnessError(f"uv build left no harness wheel in {out}")
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
    out.parent.mkdir(parents=True, exist_ok=True)
    constraints = out.parent / "base-constraints.txt"
    constraints.write_text(base_text)
    key = sha256_text(requirements_in.read_text(), base_text, (root / "overrides.txt").read_text())
    stamp = out.with_suffix(".inputs")
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        log(f"wheelhouse: {requirements_in.parent.name} packages unchanged")
        return out.read_text()
    log(f"wheelhouse: resolving {requirements_in.parent.name} packages (uv)")
    resolved = out.parent / "resolved.txt"
    _uv_compile(_tool("uv"), root, requirements_in, constraints, resolved, str(requirements_in))
    base = _pins(base_text)
    extra = [
        f"{name}=={version}"
        for name, version in sorted(_pins(resolved.read_text()).items())
        if name not in base
    ]
    out.write_text("\n".join(extra) + "\n")
    stamp.write_text(key)
    return out.read_text()
