"""A file ledger's locks follow its real identity (ledger/identity.py): a study naming the ledger
through a symlink meets the same live-job slot and the same append lock as one naming it
directly, and a ledger with a second hard link (a name no path resolution can see) is refused."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.errors import LedgerError
from ledger.file_store import FileStore
from ledger.ledger import Ledger
from ledger.live_job import LiveJobBusy, claim, this_process


def _two_names(tmp_path: Path) -> tuple[Path, Path]:
    real = tmp_path / "a" / "ledger.jsonl"
    real.parent.mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "b" / "ledger.jsonl"
    link.symlink_to(real)  # the other study's ledger: a symlink to the first's
    return real, link


def test_a_symlinked_ledger_cannot_let_two_live_jobs_run(tmp_path: Path) -> None:
    real, link = _two_names(tmp_path)
    with claim(real, this_process("run-a")), pytest.raises(LiveJobBusy, match="run run-a"):
        claim(link, this_process("run-b"))
    with claim(link, this_process("run-b")), pytest.raises(LiveJobBusy, match="run run-b"):
        claim(real, this_process("run-c"))


def test_a_symlinked_folder_before_the_ledger_exists_is_one_slot_too(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    first = claim(tmp_path / "real" / "ledger.jsonl", this_process("run-a"))
    with pytest.raises(LiveJobBusy, match="run run-a"):
        claim(tmp_path / "alias" / "ledger.jsonl", this_process("run-b"))
    first.release()


def test_the_append_lock_is_one_lock_for_every_name(tmp_path: Path) -> None:
    real, link = _two_names(tmp_path)
    with Ledger(real) as first:
        first.open_stage("s", Decimal(1))
        store = first.store
        assert isinstance(store, FileStore)
        # While this name holds the append lock, the other name cannot append.
        with store.transaction(), pytest.raises(LedgerError, match="could not lock"):
            Ledger(link, lock_timeout=0)
    with Ledger(link) as second:
        assert second.state().stages["s"].cap_usd == Decimal(1)


def test_a_ledger_with_a_second_hard_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "ledger.jsonl"
    with Ledger(real) as ledger:
        ledger.open_stage("s", Decimal(1))
    os.link(real, tmp_path / "other.jsonl")
    with pytest.raises(LedgerError, match="2 hard links"):
        claim(tmp_path / "other.jsonl", this_process("run-a"))
    with pytest.raises(LedgerError, match="2 hard links"):
        Ledger(real)


def test_a_handed_on_claim_never_lets_go_and_names_its_new_run(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    with claim(ledger, this_process("pilot-stage")) as job:
        job.hand_to("leg-1", str(tmp_path / "leg-1"))
        with pytest.raises(LiveJobBusy, match="run leg-1"):
            claim(ledger, this_process("intruder"))
        job.hand_to("leg-2", str(tmp_path / "leg-2"))
        with pytest.raises(LiveJobBusy, match="run leg-2"):
            claim(ledger, this_process("intruder"))
    with claim(ledger, this_process("after")) as later:
        assert later.stale == []  # the pilot let go cleanly at its end
