"""Frozen protocol files and their addendum, through the real CLI on a study in record mode:
`harness protocol freeze` locks them, a run records their hashes and the addendum's, the report
prints them with the deviations (sections 1, 12, 13), one changed byte makes every command that
runs the study refuse naming the file, and `harness audit` catches an edited run header."""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.helpers.studies import (
    gate_then_live,
    harness,
    header,
    only_run,
    toy_arm,
    write_study,
)

pytestmark = pytest.mark.integration

ITEMS = [
    {"id": f"i{n}", "clock": "2024-05-01T10:00:00", "turns": [{"user": f"echo item {n}"}]}
    for n in range(2)
]
ADDENDUM = """\
[[entry]]
date = 2024-04-20T09:00:00Z
kind = "amendment"
file = "protocol/0b.md"
text = "Two items instead of three."
reason = "The pilot showed the third item's script was ambiguous."

[[entry]]
date = 2024-04-21
kind = "record"
text = "The pilot's median latency was 1.2 s."

[[entry]]
date = 2024-04-22
kind = "deviation"
text = "The arm's image was rebuilt after the freeze."
"""


def _study(folder: Path) -> Path:
    study = write_study(
        folder,
        {"a": toy_arm(), "b": toy_arm()},
        ITEMS,
        subject="openai/gpt-4.1-mini",
        protocol={
            "frozen": ["protocol/0a.md", "protocol/0b.md"],
            "addendum": "protocol/addendum.toml",
        },
    )
    (folder / "protocol").mkdir()
    (folder / "protocol" / "0a.md").write_text("# Protocol 0a\nArms a and b, two items.\n")
    (folder / "protocol" / "0b.md").write_text("# Protocol 0b\nAfter the pilot.\n")
    (folder / "protocol" / "addendum.toml").write_text(ADDENDUM)
    return study


def _refused(done: subprocess.CompletedProcess[str], name: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    assert err[0].startswith("harness: error: frozen protocol file " + name), err
    assert len([line for line in err if not line.startswith("  hint:")]) == 1, err


def test_a_frozen_study_runs_records_its_hashes_and_refuses_a_changed_byte(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "study"
    study = _study(folder)
    runs = tmp_path / "runs"
    # Not frozen yet: the run refuses, saying how to freeze.
    unfrozen = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert unfrozen.returncode == 2 and "protocol/0a.md is not frozen" in unfrozen.stderr
    assert "harness protocol freeze" in unfrozen.stderr and not runs.exists()
    for name in ("protocol/0a.md", str(folder / "protocol" / "0b.md")):
        frozen = harness("protocol", "freeze", str(study), name)
        assert frozen.returncode == 0, frozen.stderr
        assert ": frozen (SHA-256" in frozen.stdout
    lock = json.loads((folder / "protocol.lock.json").read_text())
    assert [f["path"] for f in lock["files"]] == ["protocol/0a.md", "protocol/0b.md"]

    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "protocol: 2 frozen file(s) matched their lock" in done.stdout
    assert "subject model: openai/gpt-4.1-mini" in done.stdout
    run_dir = only_run(runs)
    study_run = header(run_dir)["study"]
    assert study_run["subject"] == "openai/gpt-4.1-mini"
    protocol = study_run["protocol"]
    assert [f["sha256"] for f in protocol["frozen"]] == [f["sha256"] for f in lock["files"]]
    copy = run_dir / "protocol" / "addendum.toml"
    assert copy.read_text() == ADDENDUM
    assert protocol["addendum_sha256"] == hashlib.sha256(ADDENDUM.encode()).hexdigest()

    out = tmp_path / "report"
    report = harness("report", str(run_dir), "--out", str(out), "--format", "md")
    assert report.returncode == 0, report.stderr
    text = (out / "report.md").read_text()
    one = text.split("## 1 ")[1].split("## 2 ")[0]
    twelve = text.split("## 12 ")[1].split("## 13 ")[0]
    thirteen = text.split("## 13 ")[1]
    for section in (one, thirteen):
        for f in lock["files"]:
            assert f["sha256"] in section
        assert protocol["addendum_sha256"] in section
    # The recorded deviation, in every section that prints the protocol; the record run's
    # amendment (dated before it) is not one.
    for section in (one, twelve, thirteen):
        assert "The arm's image was rebuilt after the freeze." in section
    assert "Two items instead of three." not in one + twelve
    assert "The pilot showed the third item's script was ambiguous." in thirteen

    audit = harness("audit", str(run_dir))
    assert audit.returncode == 0, audit.stdout

    # One byte of a frozen file changed: every command that runs the study refuses, naming it.
    path = folder / "protocol" / "0b.md"
    original = path.read_bytes()
    path.write_bytes(original[:-2] + b"?" + original[-1:])
    for command in (
        ["record", str(study)],
        ["gate", str(study)],
        ["live", str(study), "--cap", "1"],
    ):
        _refused(
            harness(*command, "--run-dir", str(runs), "--isolation", "local"), "protocol/0b.md"
        )
    _refused(harness("replay", str(run_dir), "--isolation", "local"), "protocol/0b.md")
    assert only_run(runs) == run_dir  # nothing started
    # ... and freezing it again is refused: a frozen file never changes.
    again = harness("protocol", "freeze", str(study), "protocol/0b.md")
    assert again.returncode == 2 and "a frozen file never changes" in again.stderr
    # The audit names the changed file too.
    changed = harness("audit", str(run_dir))
    assert (
        changed.returncode == 1 and "protocol: run.json (frozen protocol/0b.md)" in changed.stdout
    )
    path.write_bytes(original)

    # An edited run header (its frozen hash) fails the audit, naming the file.
    run_json = run_dir / "run.json"
    edited = json.loads(run_json.read_text())
    first = edited["study"]["protocol"]["frozen"][0]
    first["sha256"] = ("0" if first["sha256"][0] != "0" else "1") + first["sha256"][1:]
    run_json.write_text(json.dumps(edited, indent=2))
    caught = harness("audit", str(run_dir))
    assert caught.returncode == 1, caught.stdout
    assert "protocol: run.json (frozen protocol/0a.md)" in caught.stdout
    assert "is not the lock's" in caught.stdout


def test_an_addendum_copy_edited_in_the_run_fails_the_audit(tmp_path: Path) -> None:
    folder = tmp_path / "study"
    study = _study(folder)
    for name in ("protocol/0a.md", "protocol/0b.md"):
        assert harness("protocol", "freeze", str(study), name).returncode == 0
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--limit", "1",
                   "--arm", "a", "--isolation", "local")  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_dir = only_run(runs)
    copy = run_dir / "protocol" / "addendum.toml"
    copy.write_text(ADDENDUM.replace("rebuilt", "kept"))
    audit = harness("audit", str(run_dir))
    assert audit.returncode == 1
    assert "protocol: run.json: addendum SHA-256" in audit.stdout
    # The manifest names the copy too.
    assert "file: protocol/addendum.toml: changed since the run" in audit.stdout


def test_freeze_refuses_a_file_the_study_does_not_name_and_a_malformed_addendum_stops_a_run(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "study"
    study = _study(folder)
    (folder / "notes.md").write_text("not a protocol file\n")
    refused = harness("protocol", "freeze", str(study), str(folder / "notes.md"))
    assert refused.returncode == 2
    assert "is not one of the study's frozen protocol files" in refused.stderr
    assert not (folder / "protocol.lock.json").exists()
    for name in ("protocol/0a.md", "protocol/0b.md"):
        assert harness("protocol", "freeze", str(study), name).returncode == 0
    (folder / "protocol" / "addendum.toml").write_text(
        ADDENDUM + '\n[[entry]]\ndate = 2024-04-23\nkind = "amendment"\ntext = "no reason"\n'
    )
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 2 and not runs.exists()
    assert "addendum protocol/addendum.toml: entry 4: " in done.stderr
    assert "an amendment needs its reason" in done.stderr
    shown = harness("protocol", "show", str(study))
    assert shown.returncode == 2 and "entry 4" in shown.stderr


def test_a_subject_that_names_no_vendor_is_refused(tmp_path: Path) -> None:
    study = write_study(tmp_path / "s", {"a": toy_arm()}, ITEMS, subject="gpt-4.1-mini")
    done = harness("items", str(study))
    assert done.returncode == 2
    assert "subject" in done.stderr and '"<vendor>/<model>"' in done.stderr


def test_an_amendment_dated_after_a_live_run_started_is_that_runs_deviation(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "study"
    study = _study(folder)
    for name in ("protocol/0a.md", "protocol/0b.md"):
        assert harness("protocol", "freeze", str(study), name).returncode == 0
    runs = tmp_path / "runs"
    # The toy arms call no model: the key only lets the live proxy start.
    live = gate_then_live(study, runs, env={"OPENAI_API_KEY": "sk-test-unused"})
    started = datetime.fromisoformat(header(live)["started"])
    # The gate's own folder (gate.json, no run.json) sits beside the runs.
    made = [p for p in runs.iterdir() if (p / "run.json").exists()]
    record = next(p for p in made if header(p)["mode"] == "record")
    # Amended after the live run started (and after the record runs): the addendum grows.
    later = (started + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with (folder / "protocol" / "addendum.toml").open("a") as f:
        f.write(
            f'\n[[entry]]\ndate = {later}\nkind = "amendment"\ntext = "Cap raised to 2 USD."\n'
            'reason = "The first items cost more than the pilot said."\n'
        )
    texts = {}
    for run_dir in (live, record):
        out = tmp_path / f"report-{run_dir.name}"
        done = harness("report", str(run_dir), "--out", str(out), "--format", "md")
        assert done.returncode == 0, done.stderr
        texts[run_dir] = (out / "report.md").read_text()
    twelve = texts[live].split("## 12 ")[1].split("## 13 ")[0]
    assert "Cap raised to 2 USD." in twelve and "after this live run started" in twelve
    # V0 skipped (the suite's own live runs, tests/conftest.py): run.json and the report say so.
    assert header(live)["study"]["suite"].startswith("not checked: --skip-suite")
    assert "(V0): the integration suite was not checked" in twelve
    # The amendment dated before the run is not a deviation; a record run has none of them.
    assert "Two items instead of three." not in twelve
    assert "Cap raised to 2 USD." not in texts[record].split("## 12 ")[1].split("## 13 ")[0]
    # The run's own copy is the addendum it started under; the audit notes the growth.
    assert "Cap raised" not in (live / "protocol" / "addendum.toml").read_text()
    audit = harness("audit", str(live))
    assert audit.returncode == 0, audit.stdout
    assert "note: the study's addendum protocol/addendum.toml changed since the run" in audit.stdout

    # Backdated: an amendment written now, dated before the run, that the run's copy lacks.
    earlier = (started - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    addendum = folder / "protocol" / "addendum.toml"
    with addendum.open("a") as f:
        f.write(
            f'\n[[entry]]\ndate = {earlier}\nkind = "amendment"\ntext = "Judge swapped."\n'
            'reason = "Cheaper."\n'
        )
    # And the recorded deviation deleted from the study's addendum after the run.
    deviation = "[[entry]]" + ADDENDUM.split("[[entry]]")[3]
    addendum.write_text(addendum.read_text().replace(deviation, ""))
    assert "rebuilt after the freeze" not in addendum.read_text()
    out = tmp_path / "report-again"
    done = harness("report", str(live), "--out", str(out), "--format", "md")
    assert done.returncode == 0, done.stderr
    twelve = (out / "report.md").read_text().split("## 12 ")[1].split("## 13 ")[0]
    assert "Judge swapped." in twelve and "backdated" in twelve
    assert "The arm's image was rebuilt after the freeze." in twelve  # the run's copy holds it
    audit = harness("audit", str(live))
    assert audit.returncode != 0, audit.stdout
    assert "lost the deviation of 2024-04-22" in audit.stdout and "only grows" in audit.stdout
    assert "Judge swapped." in audit.stdout and "backdated" in audit.stdout


def test_merged_shards_keep_the_protocol_and_its_audit_reads_the_shards_copies(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "study"
    study = _study(folder)
    for name in ("protocol/0a.md", "protocol/0b.md"):
        assert harness("protocol", "freeze", str(study), name).returncode == 0
    shards = []
    for i in (1, 2):
        runs = tmp_path / f"shard{i}"
        done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local",
                       "--shard", f"{i}/2")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        shards.append(only_run(runs))
    merged = tmp_path / "merged"
    done = harness("merge", *map(str, shards), "--out", str(merged))
    assert done.returncode == 0, done.stdout + done.stderr
    assert header(merged)["study"]["protocol"] == header(shards[0])["study"]["protocol"]
    audit = harness("audit", str(merged))
    assert audit.returncode == 0, audit.stdout
    # The shards' copies are the merged run's: one edited fails the audit.
    copies = sorted(merged.glob("shards/*/protocol/addendum.toml"))
    assert len(copies) == 2
    for copy in copies:
        copy.write_text(ADDENDUM + "\n# edited\n")
    edited = harness("audit", str(merged))
    assert edited.returncode == 1 and "protocol: run.json: addendum SHA-256" in edited.stdout


def test_a_locked_file_the_study_stops_naming_refuses_until_its_withdrawal_is_recorded(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "study"
    study = _study(folder)
    for name in ("protocol/0a.md", "protocol/0b.md"):
        assert harness("protocol", "freeze", str(study), name).returncode == 0
    (folder / "protocol" / "0b.md").write_text("# Protocol 0b\nChanged once unnamed.\n")
    arms = {"a": toy_arm(), "b": toy_arm()}
    runs = tmp_path / "runs"
    addendum = "protocol/addendum.toml"
    dropped = {"frozen": ["protocol/0a.md"], "addendum": addendum}
    for protocol, name in ((dropped, "protocol/0b.md"), (None, "protocol/0a.md")):
        # 0b dropped from `frozen`, then the whole [protocol] table: the lock holds both.
        fields = {"protocol": protocol} if protocol else {}
        write_study(folder, arms, ITEMS, **fields)
        done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 2 and not runs.exists(), done.stderr
        err = [line for line in done.stderr.splitlines() if not line.startswith("  hint:")]
        assert len(err) == 1 and f"protocol file {name} is locked in" in err[0], err
        assert "no longer names it" in err[0] and "withdrawal" in done.stderr
    write_study(folder, arms, ITEMS, protocol={"frozen": ["protocol/0a.md"], "addendum": addendum})
    with (folder / addendum).open("a") as f:
        f.write(
            '\n[[entry]]\ndate = 2024-04-25T09:00:00Z\nkind = "withdrawal"\n'
            'file = "protocol/0b.md"\ntext = "0b withdrawn."\nreason = "Its arm was dropped."\n'
        )
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "protocol: 1 frozen file(s) matched their lock" in done.stdout
