"""scripts/newest-python: the interpreter scripts/bootstrap builds .venv with (and test-py3 tests
on) is the newest real Python at or above the minimum, found on PATH; a shim that exists but fails
to run (pyenv's, for a version not selected) is passed over, and no candidate means exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "newest-python"
PYENV_VERSIONS = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


def _pyenv_python(prefix: str) -> Path:
    found = sorted(PYENV_VERSIONS.glob(f"{prefix}.*/bin/python3"))
    if not found:
        pytest.skip(f"no Python {prefix} under {PYENV_VERSIONS} to stand beside this one")
    return found[-1]


def _run(bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # PATH holds only the test's folder and the basics (no pyenv): the candidates are exactly
    # the ones the test put there.
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(bin_dir)}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """python3.12 -> a real 3.12, python3.13 -> this interpreter (3.13), and a python3.14 that
    fails as an unselected pyenv shim does."""
    if sys.version_info[:2] != (3, 13):
        pytest.skip("the fixture names this interpreter python3.13")
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3.12").symlink_to(_pyenv_python("3.12"))
    (folder / "python3.13").symlink_to(Path(sys.executable).resolve())
    shim = folder / "python3.14"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.14: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    return folder


def test_the_newest_runnable_python_is_chosen_over_a_failing_shim(bin_dir: Path) -> None:
    proc = _run(bin_dir, "3.12")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == bin_dir / "python3.13"


def test_no_python_at_the_minimum_exits_1_and_prints_nothing(bin_dir: Path) -> None:
    proc = _run(bin_dir, "3.14")
    assert (proc.returncode, proc.stdout) == (1, "")


def test_an_older_python_alone_is_not_taken_for_the_minimum(bin_dir: Path) -> None:
    (bin_dir / "python3.13").unlink()
    assert Path(_run(bin_dir, "3.12").stdout.strip()) == bin_dir / "python3.12"
    assert _run(bin_dir, "3.13").returncode == 1
