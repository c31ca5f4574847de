"""A fake Anthropic + OpenAI vendor server for live-mode tests (see `server.py`)."""

from tests.fakevendor.behaviour import Behaviour, BehaviourError, parse_behaviour
from tests.fakevendor.records import Disconnect, ReceivedRequest, Served
from tests.fakevendor.server import FakeVendor

__all__ = [
    "Behaviour",
    "BehaviourError",
    "Disconnect",
    "FakeVendor",
    "ReceivedRequest",
    "Served",
    "parse_behaviour",
]
