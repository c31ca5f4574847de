"""A postgresql:// ledger wherever a ledger file is taken: `harness ledger` commands (open-stage,
show, verify, naming a rewritten entry), the study's `ledger` field and HARNESS_LEDGER_URL
(which overrides it without changing the study's hash), and a URL with a password refused
before it can reach a run directory."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from ledger.ledger import Ledger, verify
from tests.helpers.studies import harness
from tests.pg_server import PgServer, running_server
from tests.study_builder import StudyBuilder

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    yield from running_server()


def cli(*args: str) -> tuple[int, str]:
    done = harness(*args, env={"HARNESS_LEDGER": None, "HARNESS_LEDGER_URL": None})
    return done.returncode, done.stdout + done.stderr


def test_ledger_commands_take_a_postgres_url(pg: PgServer, tmp_path: Path) -> None:
    url = pg.new_database()
    code, said = cli("ledger", "open-stage", "pilot", "--cap", "10", "--ledger", url)
    assert code == 0, said
    code, said = cli("ledger", "show", "--ledger", url)
    assert code == 0 and "pilot" in said and "$10.000000" in said
    code, said = cli("ledger", "verify", "--ledger", url)
    assert code == 0 and "ok, 1 entries" in said

    # Exported, the rows are a ledger file with the same chain (for the report, an archive).
    code, said = cli("ledger", "export", "--ledger", url, "--out", str(tmp_path / "copy.jsonl"))
    assert code == 0 and "exported 1 entries" in said, said
    assert verify(tmp_path / "copy.jsonl").head == verify(url).head

    # A shard's proxy killed on another machine left its run open: settled by hand, from here.
    with Ledger(url) as led:
        led.reserve_run("killed-shard", Decimal(3), "pilot")
    code, said = cli("ledger", "settle", "killed-shard", "--ledger", url)
    assert code == 0 and "full reservation $3" in said, said
    with Ledger(url) as led:
        assert led.state().runs["killed-shard"].settled

    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE harness_ledger SET line = replace(line, '\"10\"', '\"99\"')")
    code, said = cli("ledger", "verify", "--ledger", url)
    assert code == 1 and ":1: hash does not match" in said and "chain BROKEN" in said
    assert "ok," not in said
    code, said = cli("ledger", "export", "--ledger", url, "--out", str(tmp_path / "bad.jsonl"))
    assert code != 0 and "a broken chain is not exported" in said
    assert not (tmp_path / "bad.jsonl").exists()


def test_a_study_names_its_postgres_ledger_or_the_environment_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_LEDGER_URL", raising=False)
    url = "postgresql://harness@db.example/harness"
    study = StudyBuilder(fields={"ledger": url}).arm("a", "python a.py").write(tmp_path / "s")
    loaded = load_study(study)
    assert loaded.ledger_url == url and loaded.ledger_location == url

    plain = StudyBuilder().arm("a", "python a.py").write(tmp_path / "p")
    before = load_study(plain)
    assert before.ledger_url is None and before.ledger_location == plain.parent / "ledger.jsonl"
    monkeypatch.setenv("HARNESS_LEDGER_URL", url)
    after = load_study(plain)
    assert after.ledger_location == url and after.study_sha256 == before.study_sha256


@pytest.mark.parametrize(
    "ledger",
    [
        "postgresql://harness:hunter2@db.example/harness",
        "postgresql://db.example/harness?password=hunter2",
        "mysql://db.example/harness",
    ],
)
def test_a_ledger_url_with_a_password_or_another_scheme_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ledger: str
) -> None:
    monkeypatch.delenv("HARNESS_LEDGER_URL", raising=False)
    study = StudyBuilder(fields={"ledger": ledger}).arm("a", "python a.py").write(tmp_path / "s")
    with pytest.raises(HarnessError, match="field 'ledger'") as e:
        load_study(study)
    assert "hunter2" not in str(e.value)


def test_proxy_serve_refuses_a_ledger_url_with_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")  # the key check comes first
    code, said = cli(
        "proxy", "serve", "--mode", "live", "--cap", "1", "--port", "0",
        "--ledger", "postgresql://u:hunter2@127.0.0.1:1/db", "--run-dir", str(tmp_path / "run"),
    )  # fmt: skip
    assert code != 0 and "carries a password" in said and "hunter2" not in said
