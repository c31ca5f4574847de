"""The run manifest in run.json: every file of the run with its SHA-256 and size, the input
hashes and the tool's version, written at the end of study runs and `harness proxy serve` runs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ledger.prices import load_prices
from rundir.runs.header import RunHeader, now_iso
from rundir.runs.manifest import tool_version
from rundir.runs.seal import write_manifest
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import harness, header, only_run, toy_arm, write_study
from tests.proxy.live_helpers import start_live_proxy

pytestmark = pytest.mark.integration

ITEM = {"id": "a", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo hi"}]}


def _files_on_disk(run: Path) -> dict[str, tuple[str, int]]:
    return {
        p.relative_to(run).as_posix(): (
            hashlib.sha256(p.read_bytes()).hexdigest(),
            p.stat().st_size,
        )
        for p in run.rglob("*")
        if p.is_file() and p.name not in ("run.json", "audit.json")
    }


def test_write_manifest_lists_every_file_but_the_header(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "bodies").mkdir(parents=True)
    (run / "calls.jsonl").write_text('{"a": 1}\n')
    (run / "bodies" / "pack.bin").write_bytes(b"\x00\x01" * 100)
    (run / "audit.json").write_text("{}")  # written after a run: never listed
    head = RunHeader(run_id="r", mode="record", started=now_iso())
    manifest = write_manifest(run, head)
    listed = {f.path: (f.sha256, f.size) for f in manifest.files}
    assert listed == _files_on_disk(run)
    assert manifest.tool_version == tool_version() != "" and manifest.prices_sha256 is None
    saved = RunHeader.model_validate(json.loads((run / "run.json").read_text()))
    assert saved.manifest == manifest


def test_a_study_run_ends_with_its_manifest(tmp_path: Path) -> None:
    study = write_study(tmp_path / "s", {"a": toy_arm()}, [ITEM])
    done = harness(
        "record", str(study), "--run-dir", str(tmp_path / "runs"), "--isolation", "local"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(tmp_path / "runs")
    data = header(run)
    manifest = data["manifest"]
    assert {f["path"]: (f["sha256"], f["size"]) for f in manifest["files"]} == _files_on_disk(run)
    assert {"turns.jsonl", "egress.jsonl", "proxy.json"} <= {f["path"] for f in manifest["files"]}
    assert manifest["study_sha256"] == data["study"]["study_sha256"]
    assert manifest["items_sha256"] == data["study"]["items_sha256"]
    assert manifest["prices_sha256"] == load_prices().sha256  # the packaged table
    assert manifest["tool_version"] and manifest["images"] == {}
    audited = harness("audit", str(run))
    assert audited.returncode == 0, audited.stdout


def test_a_live_proxy_run_records_its_price_table_and_ledger_head(tmp_path: Path) -> None:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path, vendor)
        client = proxy.openai()
        for text in ("one", "two"):
            client.chat.completions.create(
                model="gpt-4.1-mini",
                messages=[{"role": "user", "content": text}],
                max_completion_tokens=50,
            )
        proxy.calls(at_least=2)
        assert proxy.stop() == 0
    manifest = header(proxy.run_dir)["manifest"]
    assert manifest["prices_sha256"] == load_prices().sha256
    assert Path(manifest["ledger_path"]) == (tmp_path / "ledger.jsonl").resolve()
    assert manifest["ledger_entries"] >= 4 and len(manifest["ledger_head"]) == 64
    assert {"calls.jsonl", "bodies/pack.bin"} <= {f["path"] for f in manifest["files"]}
    audited = harness("audit", str(proxy.run_dir))
    assert audited.returncode == 0, audited.stdout
    assert "2 calls re-priced" in audited.stdout
