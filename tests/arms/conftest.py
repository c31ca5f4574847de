"""Arm test fixtures: the compiled TypeScript seam and example arm (harness/images/node.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.images.node import build_node

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def node_dist() -> Path:
    """`.cache/node/<hash>/` with dist/ and node_modules/ (npm ci from the cache, then tsc)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("Node.js and npm are needed for the TypeScript seam (the machine has them)")
    return build_node(REPO, REPO / ".cache", lambda line: None)
