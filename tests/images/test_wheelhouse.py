"""harness.images.wheelhouse.image_pip: the images' wheels are resolved and fetched by .venv's own
pip, so a .venv that is not the images' Python (or has no pip, as a uv-made one) is refused with
the command that fixes it, before anything is resolved; the images' Python is accepted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.images.wheelhouse import IMAGE_PYTHON, image_pip

PYENV_VERSIONS = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


def _venv(root: Path, python: Path, *args: str) -> Path:
    subprocess.run([str(python), "-m", "venv", *args, str(root / ".venv")], check=True)
    return root


def test_a_venv_of_the_images_python_gives_its_pip(tmp_path: Path) -> None:
    if sys.version_info[:2] != IMAGE_PYTHON:
        pytest.skip("this interpreter is not the images' Python")
    root = _venv(tmp_path, Path(sys.executable))
    assert image_pip(root) == [str(root / ".venv" / "bin" / "python"), "-m", "pip"]


def test_a_venv_of_another_python_is_refused_naming_both(tmp_path: Path) -> None:
    other = sorted(PYENV_VERSIONS.glob("3.12.*/bin/python3"))
    if not other:
        pytest.skip(f"no Python 3.12 under {PYENV_VERSIONS}")
    root = _venv(tmp_path, other[-1], "--without-pip")
    with pytest.raises(HarnessError) as refused:
        image_pip(root)
    assert "run Python 3.13" in str(refused.value) and ".venv is Python 3.12" in str(refused.value)
    assert "scripts/bootstrap" in (refused.value.hint or "")


def test_a_venv_without_pip_is_refused(tmp_path: Path) -> None:
    if sys.version_info[:2] != IMAGE_PYTHON:
        pytest.skip("this interpreter is not the images' Python")
    root = _venv(tmp_path, Path(sys.executable), "--without-pip")
    with pytest.raises(HarnessError, match="without pip"):
        image_pip(root)


def test_no_venv_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"no \.venv"):
        image_pip(tmp_path)
