"""proxy.json is one model (rundir/control/proxy_file.py): every key it sets is an option the
proxy's addons register, an unknown key is refused in one line, and the proxy's entry reads it back
whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from rundir.control.proxy_file import (
    PROXY_FILE_SCHEMA,
    ControlRelay,
    ProxyFile,
    ProxySettings,
    ProxySettingsError,
    PurposeRule,
)
from tests.proxy.addon_kit import addon_context

ROOT = Path(__file__).resolve().parents[3]


def every_setting(tmp_path: Path, mode: str = "live") -> ProxyFile:
    """A file with every field set to something other than its default."""
    settings = ProxySettings(
        mode=mode,  # type: ignore[arg-type]
        run_dir=tmp_path / "run",
        run_id="r1",
        stubs=tmp_path / "stubs.toml",
        arm="a",
        body_limit=1000,
        masks=["metadata.id"],
        sync_interval=0.5,
        purposes=[PurposeRule(purpose="utility", route="openai.chat")],
        upstreams=["openai=https://127.0.0.1:9"],
        cap="5",
        prices=tmp_path / "prices.toml",
        ledger=tmp_path / "ledger.jsonl",
        stage="s",
        stage_cap="9",
        deadline=5.0,
        pins=tmp_path / "study.toml",
        replay_from=tmp_path / "earlier",
        replay_timing=True,
        arms=["a", "b"],
        ca_bundle=tmp_path / "ca.pem",
    )
    return ProxyFile(
        settings=settings,
        arm_ports={"a": 8100, "b": 8101},
        https_proxy_ports={"a": 8200, "b": 8201},
        arm_hosts={"a": "10.0.0.2", "b": "10.0.1.2"},
        control_port=8090,
        control_relay=ControlRelay(host="10.0.2.2", port=8091),
        confdir=str(tmp_path / "ca"),
        vendor_cert=str(tmp_path / "ca" / "vendor-hosts.pem"),
        ca_bundle=str(tmp_path / "ca.pem"),
        egress_log=str(tmp_path / "egress.jsonl"),
        dns={"log": str(tmp_path / "dns.jsonl")},
    )


async def test_every_key_proxy_json_sets_is_an_option_the_addons_register(tmp_path: Path) -> None:
    async with addon_context(tmp_path) as kit:
        registered = set(kit.tctx.options.keys())
        for mode in ("record", "live", "replay"):
            options = every_setting(tmp_path, mode).options()
            assert set(options) <= registered, set(options) - registered
        # ...and every harness_ option is one the model sets, so none can be forgotten.
        harness = {name for name in registered if name.startswith("harness_")}
        written = set(every_setting(tmp_path, "live").options())
        assert harness - written == {"harness_replay_from"}  # replay mode only
        assert "harness_replay_from" in every_setting(tmp_path, "replay").options()


async def test_the_models_defaults_are_the_options_defaults(tmp_path: Path) -> None:
    async with addon_context(tmp_path) as kit:
        # A live model leaves no field out; its mode is the only value not a default.
        defaults = ProxySettings(mode="live").addon_options() | {"harness_mode": "record"}
        for name, value in defaults.items():
            assert kit.tctx.options.default(name) == value, name


def test_live_only_settings_stay_out_of_a_record_runs_options(tmp_path: Path) -> None:
    options = every_setting(tmp_path, "record").options()
    for name in ("harness_cap", "harness_ledger", "harness_prices", "harness_replay_from"):
        assert name not in options
    assert every_setting(tmp_path, "record").settings.upstream_ca() == ""


def test_the_file_reads_back_as_written(tmp_path: Path) -> None:
    written = every_setting(tmp_path)
    path = tmp_path / "proxy.json"
    written.write(path)
    data = json.loads(path.read_text())
    assert data["schema"] == PROXY_FILE_SCHEMA
    # The backends' own readers (dns_refuser) and the tests read these keys at the top.
    assert data["arm_ports"]["b"] == 8101 and data["dns"]["log"].endswith("dns.jsonl")
    assert "arms" not in data["settings"]  # they reach the proxy as listeners
    read = ProxyFile.read(path)
    assert read.options() == written.options()
    assert read.settings.purposes == written.settings.purposes
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d["settings"].update(harness_mode="live"), "settings.harness_mode"),
        (lambda d: d.update(listen_everywhere=True), "listen_everywhere"),
        (lambda d: d["settings"].update(mode="paid"), "settings.mode"),
        (lambda d: d.update(schema=0), "schema 0"),
        (lambda d: d.update(schema=2), "newer harness"),
        (lambda d: d.pop("control_port"), "control_port"),
    ],
)
def test_an_unknown_or_bad_key_is_refused_in_one_line(tmp_path: Path, change, says) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "proxy.json"
    every_setting(tmp_path).write(path)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ProxySettingsError, match=says) as err:
        ProxyFile.read(path)
    assert "\n" not in str(err.value)


def test_an_unknown_setting_is_refused_where_the_model_is_built() -> None:
    with pytest.raises(ValidationError, match="extra"):
        ProxySettings(moed="live")  # type: ignore[call-arg]


def test_paths_are_made_absolute_where_the_model_is_built(tmp_path: Path) -> None:
    settings = ProxySettings(run_dir=Path("runs/r1"), stubs=Path("stubs.toml"))
    assert settings.run_dir is not None and settings.run_dir.is_absolute()
    assert settings.addon_options()["harness_stubs"] == str(Path("stubs.toml").resolve())


@pytest.mark.integration
def test_the_proxy_entry_refuses_a_bad_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "proxy.json"
    path.write_text('{"schema": 1, "settings": {}, "arm_ports": {}, "control_port": 1, "x": 2}')
    done = subprocess.run(
        [sys.executable, "-m", "proxy", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "harness proxy failed" in done.stderr and "x: Extra inputs" in done.stderr


@pytest.mark.integration
@pytest.mark.parametrize(
    ("module", "must_not_load"),
    [
        ("proxy.__main__", "harness"),  # the proxy's process imports nothing of harness/
        ("harness.isolation.local", "harness.cli"),  # nor do the backends import the CLI
        ("harness.isolation.docker", "harness.cli"),
    ],
)
def test_the_arrows_run_one_way(module: str, must_not_load: str) -> None:
    probe = (
        f"import sys, {module}; "
        f"print(sorted(m for m in sys.modules if m == {must_not_load!r} "
        f"or m.startswith({must_not_load + '.'!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == "[]"


def test_record_mode_fsyncs_its_call_log_once_a_second_unless_told(tmp_path: Path) -> None:
    """Record mode spends nothing: its group commit is 1 s (the fsyncs were 15.5% of a record
    proxy's CPU); live and replay keep 0.1 s; a value set is kept, also through proxy.json."""
    record = ProxySettings(mode="record", run_dir=tmp_path)
    assert record.sync_interval == 1.0
    assert record.addon_options()["harness_sync_interval"] == 1.0
    assert ProxySettings(mode="live").sync_interval == 0.1
    assert ProxySettings(mode="replay").sync_interval == 0.1
    assert ProxySettings(mode="record", sync_interval=0.2).sync_interval == 0.2
    again = ProxySettings.model_validate_json(record.model_dump_json())
    assert again.sync_interval == 1.0
