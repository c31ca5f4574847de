"""What a local arm and the local proxy start with: an arm holds no vendor key and cannot point
its SDKs away from its listener, its guard lets it reach its three ports only, and the proxy
holds the keys in live mode alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.isolation.local.arm_env import GUARD_DIR, argv, arm_env, proxy_env_for
from harness.study import ArmSpec


def test_an_arm_gets_its_listeners_not_the_hosts_keys_or_its_compose_urls(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-real-one")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    spec = ArmSpec(command=["python", "-m", "arms.bare"], env={"OPENAI_BASE_URL": "http://x:1"})
    env = arm_env("a", spec, (4101, 4201, 4301), tmp_path / "ca.pem", tmp_path / "egress.jsonl")
    assert env["OPENAI_API_KEY"] != "sk-the-real-one"
    assert "4101" in env["OPENAI_BASE_URL"]
    assert "4201" in env["HTTPS_PROXY"]
    assert env["HARNESS_GUARD_ALLOW"] == "127.0.0.1:4101,127.0.0.1:4201,127.0.0.1:4301"
    assert (env["SEAM_PORT"], env["HARNESS_ARM"]) == ("4301", "a")
    assert env["PYTHONPATH"].split(":") == [str(GUARD_DIR), "/somewhere"]
    assert Path(env["HARNESS_EGRESS_LOG"]).is_absolute()


@pytest.mark.parametrize(("mode", "kept"), [("live", True), ("record", False), ("replay", False)])
def test_the_proxy_holds_vendor_keys_in_live_mode_only(
    monkeypatch: pytest.MonkeyPatch, mode: str, kept: bool
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real")
    assert ("ANTHROPIC_API_KEY" in proxy_env_for(mode)) is kept
    assert "PATH" in proxy_env_for(mode)


def test_python_arms_run_under_the_harness_interpreter() -> None:
    assert argv(ArmSpec(command="python -m arms.bare")) == [sys.executable, "-m", "arms.bare"]
    assert argv(ArmSpec(command=["./run.sh", "x"])) == ["./run.sh", "x"]
