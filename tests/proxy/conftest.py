"""Fixtures shared by the proxy tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakevendor.server import FakeVendor


@pytest.fixture(scope="module")
def vendor() -> Iterator[FakeVendor]:
    """One plain fake vendor per test module; a module that needs it set up otherwise (its own
    token counter, the study keys to check) defines its own `vendor`."""
    with FakeVendor() as fv:
        yield fv
