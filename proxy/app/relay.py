"""A tiny TCP relay: `listen host:port` -> `127.0.0.1:target`.

The proxy's control endpoint (proxy/flow/control.py) binds to 127.0.0.1 on purpose: arms must never
be able to tell the proxy which arm or turn is running. In a container that loopback is out of the
orchestrator's reach too, so the docker backend asks `python -m proxy` (proxy.json's
`control_relay`) to relay one address that only the host can reach (the proxy's address on the
run's control network, which no arm joins).
"""

from __future__ import annotations

import asyncio
import contextlib


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def start_relay(host: str, port: int, target_port: int) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    return await asyncio.start_server(handle, host, port)
