"""Where the real libraries live (scripts/library-venvs): the Python venv and the npm packages.

Without them these tests skip, except under CI=true, where a missing one is a failure: .ci/run
installs both."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.images.node import build_node

REPO = Path(__file__).resolve().parents[2]
LIBS_PYTHON = Path(
    os.environ.get("HARNESS_LIBS_PYTHON", REPO / ".cache" / "libs-venv" / "bin" / "python")
)
AI_SDK_DIR = Path(os.environ.get("HARNESS_AI_SDK_DIR", REPO / ".cache" / "ai-sdk"))


def _missing(what: str) -> None:
    message = f"{what}: run scripts/library-venvs"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (.ci/run must)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def libs_python() -> Path:
    """The venv with openai-agents, instructor, dspy and langmem."""
    if not LIBS_PYTHON.exists():
        _missing(f"no library venv at {LIBS_PYTHON}")
    found = subprocess.run(
        [str(LIBS_PYTHON), "-c", "import agents, instructor, dspy, langmem"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        _missing(f"the library venv lacks a package: {found.stderr[-300:]}")
    return LIBS_PYTHON


@pytest.fixture(scope="session")
def ai_sdk_dir() -> Path:
    """The folder whose node_modules has `ai`, `@ai-sdk/openai`, `@ai-sdk/anthropic`, `zod`."""
    if shutil.which("node") is None or not (AI_SDK_DIR / "node_modules" / "ai").is_dir():
        _missing(f"no AI SDK packages in {AI_SDK_DIR}")
    return AI_SDK_DIR


@pytest.fixture(scope="session")
def seam_js() -> Path:
    """The compiled TypeScript seam (arms/node/seam.ts), as the node arms' tests build it."""
    return build_node(REPO, REPO / ".cache", lambda line: None) / "dist" / "seam.js"


def library_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would point a library elsewhere (a
    developer's own keys and base URLs), for a script the test points at its proxy itself."""
    drop = ("OPENAI_", "ANTHROPIC_", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore", **extra}
