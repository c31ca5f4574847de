"""The run's modes behind one `Mode` (base.py): record (stubs/), replay (an earlier call log), and
live (proxy/live/ as a Mode); the local stream server that plays their streamed replies.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from proxy.modes.base import Mode
from proxy.modes.live import LiveMode
from proxy.modes.record import RecordMode
from proxy.modes.replay import CUT_OUTCOMES, ReplayMode, ReplaySourceError
from proxy.modes.stream_server import StreamServer

__all__ = [
    "CUT_OUTCOMES",
    "LiveMode",
    "Mode",
    "RecordMode",
    "ReplayMode",
    "ReplaySourceError",
    "StreamServer",
]
