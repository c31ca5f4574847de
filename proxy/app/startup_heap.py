"""Keep the garbage collector's full collections off the proxy's calls.

The live proxy starts with about 200 MB of objects (mitmproxy, the SDK-shaped stubs, the price
table, pydantic's schemas), three times bare mitmdump's heap, and a full (generation 2)
collection walks every one of them: 75-115 ms each, several a minute under 32 clients, measured
with `gc.callbacks`. Each stalls every call in flight, which was the whole of the metered
proxy's 32-client p99 above bare mitmdump's. None of those objects ever becomes garbage, so once
the proxy is up they are moved out of the collector's sight (`gc.freeze`, whose documentation
suggests it for this); later collections walk only what the calls allocated.
"""

from __future__ import annotations

import gc


class FreezeStartupHeap:
    """Freezes the heap in the `running` hook; add it after every addon that loads state there."""

    def running(self) -> None:
        gc.collect()  # what start-up left as garbage goes now, not frozen in for good
        gc.freeze()
