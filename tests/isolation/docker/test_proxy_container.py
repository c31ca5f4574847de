"""What the docker backend's proxy container runs with: the study's keys passed by name in live
mode only (never a value on a command line), the DNS refuser beside the proxy once its config
exists, one listener pair per arm, and a config whose control relay is on the control network."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.isolation.base import ProxySettings
from harness.isolation.docker.proxy_container import (
    CA_STORE,
    FIRST_ARM_PORT,
    FIRST_HTTPS_PROXY_PORT,
    RELAY_PORT,
    listener_ports,
    proxy_file,
    proxy_run_args,
    proxy_script,
)

KEY = "sk-proj-not-on-any-command-line-0123456789"


@pytest.mark.parametrize("mode", ["live", "record", "replay"])
def test_vendor_keys_go_by_name_and_in_live_mode_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    settings = ProxySettings(mode=mode, run_dir=tmp_path / "run")
    args = proxy_run_args("p", "ctl", ["--label", "x=1"], settings, ["--add-host", "h:1.2.3.4"])
    assert not any(KEY in arg for arg in args)
    passed = [args[i + 1] for i, arg in enumerate(args) if arg == "-e"]
    assert ("OPENAI_API_KEY" in passed) is (mode == "live")
    assert args[:6] == ["run", "-d", "--name", "p", "--network", "ctl"]
    assert "--add-host" in args and "--cap-drop" in args


def test_the_proxy_starts_once_its_config_exists_with_the_dns_refuser_beside_it() -> None:
    script = proxy_script(Path("/r/proxy.json"), Path("/r/logs/proxy.log"))
    wait, _, rest = script.partition("done; ")
    refuser, proxy = rest.split(" & ")
    assert wait.startswith("while [ ! -e /r/proxy.json ]")
    assert refuser.startswith("python -m harness.isolation.dns_refuser /r/proxy.json >>")
    assert proxy == "exec python -m proxy /r/proxy.json >>/r/logs/proxy.log 2>&1"


def test_each_arm_gets_its_own_listener_pair_and_the_config_names_the_relay(
    tmp_path: Path,
) -> None:
    ports = listener_ports(["a", "b@1"])
    assert ports == (
        {"a": FIRST_ARM_PORT, "b@1": FIRST_ARM_PORT + 1},
        {"a": FIRST_HTTPS_PROXY_PORT, "b@1": FIRST_HTTPS_PROXY_PORT + 1},
    )
    hosts = {"a": "172.30.0.2", "b@1": "172.30.1.2"}
    settings = ProxySettings(mode="record", run_dir=tmp_path)
    config = proxy_file(settings, tmp_path, hosts, ports, "172.29.0.2")
    assert config.arm_hosts == hosts and config.arm_ports == ports[0]
    assert config.control_relay is not None
    assert (config.control_relay.host, config.control_relay.port) == ("172.29.0.2", RELAY_PORT)
    assert config.confdir == CA_STORE
    assert config.egress_log is not None and config.egress_log.startswith(str(tmp_path))
