"""An arm whose seam port another process takes between the local backend picking it and the arm
binding it is started again on another port (harness/isolation/local/backend.py), not failed: seen
once under load as a run's arm dying with "Address already in use"."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from arms.client import SeamClient
from harness.isolation.base import ProxySettings
from harness.isolation.local import LocalBackend
from harness.study import ArmSpec
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration


async def test_an_arm_whose_seam_port_was_taken_starts_on_another(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, work_dir=tmp_path)
    marker = tmp_path / "lost"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        spec = ArmSpec(
            command=[sys.executable, str(TOY_ARMS / "port_lost_arm.py")],
            env={"PORT_LOST_MARKER": str(marker), "TAKEN_PORT": str(taken), "ARM_ROLE": "B"},
        )
        settings = ProxySettings(run_dir=tmp_path, run_id="r1", mode="record", arms=["a"])
        try:
            proxy = await backend.start_proxy(settings)
            handle = await backend.start_arm("a", spec, proxy)
            assert marker.exists()  # the first start did lose its port
            client = SeamClient(handle.seam_url)
            try:
                await client.health()
            finally:
                await client.aclose()
            assert f":{taken}" not in handle.seam_url
            log = (tmp_path / "logs" / "a" / "arm.log").read_text().lower()
            assert "address already in use" in log
        finally:
            await backend.stop()


async def test_an_arm_that_fails_for_another_reason_is_not_started_again(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, work_dir=tmp_path)
    starts = tmp_path / "starts"
    spec = ArmSpec(
        command=[
            sys.executable,
            "-c",
            f"open({str(starts)!r}, 'a').write('x'); raise SystemExit('no model configured')",
        ]
    )
    settings = ProxySettings(run_dir=tmp_path, run_id="r1", mode="record", arms=["a"])
    try:
        proxy = await backend.start_proxy(settings)
        with pytest.raises(Exception, match="no model configured"):
            await backend.start_arm("a", spec, proxy)
        assert starts.read_text() == "x"
    finally:
        await backend.stop()
