"""A toy arm for the docker egress test, run in the harness-arm image as `python egress_arm.py`.

Arm "prober": its turn waits for targets.json in its working directory (the test writes it once
the run's containers exist and their addresses are known), then tries each target twice: through
the socket module (which the harness's socket guard sees, names included) and, for literal
addresses, through the raw _socket module (which bypasses the guard, so only the network and the
host's iptables rules stop it). Any other arm reports its clock (time.time(), datetime.now()),
which the harness pins to the item's date.
"""

from __future__ import annotations

import _socket
import asyncio
import json
import os
import socket
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main


def _plain(host: str, port: int) -> str:
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "connected"
    except OSError as e:
        return f"failed: {type(e).__name__}"


def _raw(host: str, port: int) -> str:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    sock.settimeout(3)
    try:
        sock.connect((host, port))
        return "connected"
    except OSError as e:
        return f"failed: {type(e).__name__}"
    finally:
        sock.close()


def _is_ip(host: str) -> bool:
    return all(part.isdigit() for part in host.split(".")) and host.count(".") == 3


class EgressArm(Arm):
    name = "egress-toy"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        if os.environ.get("HARNESS_ARM") != "prober":
            yield json.dumps({"time": time.time(), "now": datetime.now().isoformat()})
            return
        targets_file = Path("targets.json")
        deadline = time.monotonic() + 60
        while not targets_file.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        results = {}
        for host, port in json.loads(targets_file.read_text()):
            results[f"{host}:{port}"] = await asyncio.to_thread(_plain, host, port)
            if _is_ip(host):
                results[f"raw {host}:{port}"] = await asyncio.to_thread(_raw, host, port)
        yield json.dumps(results)


if __name__ == "__main__":
    main(EgressArm)
