"""images/arm/sleepfix.c, compiled once per source: the local backend preloads it beside
libfaketime (harness/isolation/clock.py) and the arm image ships it (harness/images/build.py)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from harness.errors import HarnessError


def compile_sleepfix(root: Path, cache: Path) -> Path:
    """images/arm/sleepfix.c as a shared object, built by the host's gcc. It links against the
    host's glibc (bookworm's 2.36 here) and asks for nothing newer than the images' (trixie's
    2.41) has, so it loads there (tests/docker/test_images.py)."""
    source = root / "images" / "arm" / "sleepfix.c"
    out = cache / "sleepfix" / hashlib.sha256(source.read_bytes()).hexdigest()[:16] / "sleepfix.so"
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
