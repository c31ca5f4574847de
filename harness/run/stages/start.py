"""The pipeline's second stage: bring up the run's proxy, and always take down what started.

The arms come up inside the orchestrator, one at a time, each once the proxy listens; stopping
is this stage's too (not the finishing stage's): the backend's processes belong to the event loop
that started them, so they are stopped in it, as the run leaves this context.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from harness.isolation import IsolationBackend, ProxyInfo, ProxySettings


@asynccontextmanager
async def running(backend: IsolationBackend, settings: ProxySettings) -> AsyncIterator[ProxyInfo]:
    """The started proxy; on the way out every arm, then the proxy, stopped."""
    try:
        yield await backend.start_proxy(settings)
    finally:
        # Shielded: a second Ctrl-C cancels the run, never the stopping of what it started.
        await asyncio.shield(backend.stop())
