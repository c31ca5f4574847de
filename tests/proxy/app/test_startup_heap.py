"""The proxy's start-up heap leaves the collector's sight once it runs (proxy.app.startup_heap): a
full collection then walks only what calls allocated, instead of stalling every call in flight
for the ~100 ms a walk of the whole start-up heap took."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator

import pytest

with warnings.catch_warnings():
    # mitmproxy's master imports ldap3, which trips pyasn1's DeprecationWarning (an error here).
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import hooks
    from mitmproxy.test import taddons

from proxy.app.startup_heap import FreezeStartupHeap


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


def test_once_running_the_start_up_heap_is_frozen_and_new_objects_are_not() -> None:
    loaded = [["a start-up table", i] for i in range(1000)]
    addon = FreezeStartupHeap()
    with taddons.context(addon) as tctx:
        assert gc.get_freeze_count() == 0
        tctx.master.addons.invoke_addon_sync(addon, hooks.RunningHook())
        frozen = gc.get_freeze_count()
        assert frozen >= len(loaded)  # start-up objects: out of every later collection
        later = [["a call's state", i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen  # what calls allocate is still collected
        assert any(gc.is_tracked(o) for o in later)
