"""What the docker backend reads of an arm's container and mounts for it: its log read as the arm
wrote it (never through a symlink the arm planted), its start awaited until its ready line and
its seam's answer, and its own folders only, at fixed places."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import serve_async
from harness.isolation.base import InfraError
from harness.isolation.docker.arm_container import (
    ARM_CA_CERT,
    GUARD_DIR,
    ArmFolders,
    lines_from,
    wait_until_serving,
)


class Quiet(Arm):
    name = "quiet"

    async def open_session(self, session: OpenSession) -> None:
        return None

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        yield "ok"


def test_the_log_is_read_from_an_offset_and_never_through_a_symlink(tmp_path: Path) -> None:
    log = tmp_path / "arm.log"
    log.write_text("old line\nseam ready http://x:1 arm=a seam=2\n")
    assert lines_from(log, len("old line\n")) == ["seam ready http://x:1 arm=a seam=2"]
    secret = tmp_path / "harness-only.txt"
    secret.write_text("not the arm's\n")
    planted = tmp_path / "planted.log"
    planted.symlink_to(secret)
    assert lines_from(planted, 0) == []
    assert lines_from(tmp_path / "missing.log", 0) == []


def test_an_arm_that_dies_before_its_ready_line_is_named_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "arm.log"
    log.write_text("Traceback: ImportError: no module named mem0\n")
    with pytest.raises(InfraError, match=r"(?s)arm 'a' never said it was ready; its log .*mem0"):
        asyncio.run(wait_until_serving("a", "http://127.0.0.1:9", log, 0, lambda: False, 5.0))


def test_the_wait_ends_once_the_seam_answers(tmp_path: Path) -> None:
    log = tmp_path / "arm.log"
    log.touch()

    async def scenario() -> None:
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def announce(line: str) -> None:
            log.write_text(line + "\n")
            ready.set_result(line.split()[2])

        server = asyncio.create_task(serve_async(Quiet(), "127.0.0.1", 0, on_ready=announce))
        url = await asyncio.wait_for(ready, 10)
        try:
            await wait_until_serving("quiet", url, log, 0, lambda: True, 10.0)
        finally:
            server.cancel()
            with pytest.raises(asyncio.CancelledError):
                await server

    asyncio.run(scenario())


def test_an_arm_mounts_its_own_folders_at_fixed_places(tmp_path: Path) -> None:
    folders = ArmFolders(
        tmp=tmp_path / "disk" / "tmp",
        clock=tmp_path / "clock" / "a",
        resolv=tmp_path / "resolv" / "a.conf",
        ca=tmp_path / "ca",
        egress=tmp_path / "egress" / "a",
        logs=tmp_path / "logs" / "a",
        work=tmp_path / "study",
    )
    args = folders.mounts()
    mounts = dict(arg.split(":", 1) for arg in args[1::2] if ":" in arg)
    assert mounts[str(tmp_path / "clock" / "a")] == "/harness/clock:ro"
    assert mounts[str(tmp_path / "resolv" / "a.conf")] == "/etc/resolv.conf:ro"
    assert mounts[str(tmp_path / "ca")] == f"{Path(ARM_CA_CERT).parent}:ro"
    assert mounts[str(GUARD_DIR)] == "/harness/guard:ro"
    assert mounts[str(tmp_path / "egress" / "a")] == "/harness/egress"
    assert mounts[str(tmp_path / "study")] == f"{tmp_path / 'study'}:ro"
    assert args[-2:] == ["-w", str(tmp_path / "study")]
