"""Memory benchmarks' published formats (LongMemEval, LoCoMo) read into the harness's items, and
the stratified draw a study takes from them. Nothing here knows a run: loaders produce items."""

from harness.datasets.draw import Drawn
from harness.datasets.index import file_sha256
from harness.datasets.model import DatasetError, History, Memory
from harness.datasets.source import ItemsSource, draw_from, load_drawn

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
