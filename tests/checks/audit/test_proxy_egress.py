"""`harness audit` re-checks proxy_egress.jsonl against run.json
(harness/checks/audit/proxy_egress.py): a run whose proxy was refused something but says it
passed, a run.json `proxy_refused` that disagrees with the log, and a log that does not parse
each fail the audit, naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.checks.audit.proxy_egress import proxy_egress_findings
from rundir.network.proxy_egress import (
    PROXY_EGRESS_FILE,
    ProxyEgressEntry,
    by_destination,
    write_proxy_egress,
)
from rundir.runs.header import RunHeader, StudyRun
from tests.helpers.coupled_example import copy_example
from tests.helpers.studies import harness, only_run

REFUSED = [
    ProxyEgressEntry(destination="172.17.0.1:37409", time="t", kind="refused", protocol="tcp"),
    ProxyEgressEntry(
        destination="172.17.0.1:443", time="t", kind="https_unresolved", protocol="tcp"
    ),
]


def header(passed: bool, proxy_refused: dict[str, int]) -> RunHeader:
    study = StudyRun(
        name="s", study_path="s.toml", study_sha256="0", items_sha256="0", isolation="docker",
        clock_pinning="libfaketime", arms=["a"], deadline_ms=1000, passed=passed,
        proxy_rule="enforced: ...", proxy_refused=proxy_refused,
    )  # fmt: skip
    return RunHeader(run_id="r", mode="live", kind="study", started="t", study=study)


def test_a_failed_run_whose_counts_match_its_log_passes_the_audit(tmp_path: Path) -> None:
    write_proxy_egress(tmp_path / PROXY_EGRESS_FILE, REFUSED)
    assert proxy_egress_findings(tmp_path, header(False, by_destination(REFUSED))) == []
    assert proxy_egress_findings(tmp_path / "none", header(True, {})) == []  # no file, nothing


def test_a_passed_run_over_refusals_is_named(tmp_path: Path) -> None:
    write_proxy_egress(tmp_path / PROXY_EGRESS_FILE, REFUSED)
    found = proxy_egress_findings(tmp_path, header(True, by_destination(REFUSED)))
    assert [where for where, _ in found] == ["run.json passed"]
    assert "172.17.0.1:443 (https_unresolved) x1" in found[0][1]
    assert "should have failed" in found[0][1]


def test_refusals_cut_from_the_log_or_from_run_json_are_named(tmp_path: Path) -> None:
    write_proxy_egress(tmp_path / PROXY_EGRESS_FILE, REFUSED[:1])  # one line deleted
    found = proxy_egress_findings(tmp_path, header(False, by_destination(REFUSED)))
    assert [where for where, _ in found] == [f"run.json proxy_refused / {PROXY_EGRESS_FILE}"]
    assert f"{PROXY_EGRESS_FILE} holds 172.17.0.1:37409 (refused) x1" in found[0][1]
    write_proxy_egress(tmp_path / PROXY_EGRESS_FILE, REFUSED)
    found = proxy_egress_findings(tmp_path, header(True, {}))  # run.json scrubbed of both
    assert {where for where, _ in found} == {
        "run.json passed",
        f"run.json proxy_refused / {PROXY_EGRESS_FILE}",
    }


def test_a_log_that_does_not_parse_is_named(tmp_path: Path) -> None:
    write_proxy_egress(tmp_path / PROXY_EGRESS_FILE, REFUSED)
    with open(tmp_path / PROXY_EGRESS_FILE, "a") as f:
        f.write('{"schema": 1, "destination": "1.2.3.4:80", "kind": "allowed"}\n')
    found = proxy_egress_findings(tmp_path, header(False, by_destination(REFUSED)))
    assert len(found) == 1 and found[0][0] == PROXY_EGRESS_FILE
    assert found[0][1].startswith("does not parse: 3: not a proxy egress entry")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("proxy_egress_audit")
    study = copy_example(base / "study")
    done = harness("record", str(study), "--run-dir", str(base / "runs"), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return only_run(base / "runs")


def test_harness_audit_fails_a_passed_run_with_a_refusal_in_its_log(
    recorded: Path, tmp_path: Path
) -> None:
    done = harness("audit", str(recorded))
    audit = json.loads((recorded / "audit.json").read_text())
    assert [d for d in audit["discrepancies"] if d["check"] == "proxy_egress"] == []
    copy = tmp_path / recorded.name
    shutil.copytree(recorded, copy)
    write_proxy_egress(copy / PROXY_EGRESS_FILE, REFUSED)  # a refusal the run.json hides
    done = harness("audit", str(copy))
    audit = json.loads((copy / "audit.json").read_text())
    found = [d for d in audit["discrepancies"] if d["check"] == "proxy_egress"]
    assert done.returncode != 0
    assert {d["where"] for d in found} == {
        "run.json passed",
        f"run.json proxy_refused / {PROXY_EGRESS_FILE}",
    }
    assert PROXY_EGRESS_FILE in done.stdout + done.stderr
