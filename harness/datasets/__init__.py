"""Memory benchmarks' published formats (LongMemEval, LoCoMo) read into the harness's items, and
the stratified draw a study takes from them. Nothing here knows a run: loaders produce items."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.datasets.draw import Drawn
    from harness.datasets.index import file_sha256
    from harness.datasets.model import DatasetError, History, Memory
    from harness.datasets.source import ItemsSource, draw_from, load_drawn

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "DatasetError": "harness.datasets.model",
    "Drawn": "harness.datasets.draw",
    "History": "harness.datasets.model",
    "ItemsSource": "harness.datasets.source",
    "Memory": "harness.datasets.model",
    "draw_from": "harness.datasets.source",
    "file_sha256": "harness.datasets.index",
    "load_drawn": "harness.datasets.source",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DatasetError",
    "Drawn",
    "History",
    "ItemsSource",
    "Memory",
    "draw_from",
    "file_sha256",
    "load_drawn",
]
