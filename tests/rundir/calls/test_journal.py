"""rundir/calls/journal.py: reservations.jsonl lines are models, written by the journal and read
back by the spend recovery; a torn last line is skipped, a whole line that is no entry refused."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import pytest

from rundir.calls.journal import (
    JOURNAL_NAME,
    JournalBlock,
    JournalCall,
    ReservationJournal,
    read_journal,
    recover_spend,
)
from rundir.errors import RunDirError


def journal_some_calls(run_dir: Path) -> None:
    async def reserve() -> None:
        journal = ReservationJournal(run_dir)
        for seq in (1, 2, 3):
            await journal.cover(Decimal("0.0125"))
            journal.note_call(seq, Decimal("0.0125"), "claude-x", "anthropic.messages")
        await journal.drain()
        journal.close()

    asyncio.run(reserve())


def test_the_journal_writes_lines_of_its_models(tmp_path: Path) -> None:
    journal_some_calls(tmp_path)
    lines = [json.loads(line) for line in (tmp_path / JOURNAL_NAME).read_text().splitlines()]
    # A call draws from a durable block before it goes out; its own line follows.
    assert lines[0]["kind"] == "block"
    first = next(line for line in lines if line["kind"] == "call")
    assert first == {
        "schema": 1,
        "kind": "call",
        "seq": 1,
        "reserved_usd": "0.0125",
        "model": "claude-x",
        "route": "anthropic.messages",
    }
    entries = read_journal(tmp_path)
    assert [e.seq for e in entries if isinstance(e, JournalCall)] == [1, 2, 3]
    blocks = sum((e.usd for e in entries if isinstance(e, JournalBlock)), Decimal(0))
    assert blocks >= Decimal("0.0375")


@pytest.mark.parametrize(
    ("amount", "model"),
    [
        ("0.0125", "claude-x"),
        ("1E-7", "gpt-4.1-mini-2025-04-14"),
        ("0.0000001230000", "m"),
        ("123456789.123456789012345678901234567890", "é \u2028 \x7f"),
        ("0", 'a "quoted" \\ name\n\x01/'),
    ],
)
def test_a_call_line_is_the_models_own_json(tmp_path: Path, amount: str, model: str) -> None:
    # note_call formats its line directly: byte for byte what the model writes, read back alike.
    journal = ReservationJournal(tmp_path)
    journal.note_call(7, Decimal(amount), model, "openai.chat")
    journal.close()
    # split("\n"): str.splitlines would also split at the U+2028 inside a model name.
    line = (tmp_path / JOURNAL_NAME).read_text(encoding="utf-8").split("\n")[0]
    call = JournalCall(seq=7, reserved_usd=Decimal(amount), model=model, route="openai.chat")
    assert line == call.model_dump_json(by_alias=True)
    assert read_journal(tmp_path) == [call]


def test_unlogged_calls_are_charged_their_reservation(tmp_path: Path) -> None:
    journal_some_calls(tmp_path)
    (tmp_path / "calls.jsonl").write_text(
        '{"seq": 1, "cost_usd": "0.002", "reserved_usd": "0.0125"}\n'
    )
    spend = recover_spend(tmp_path)
    assert (spend.logged_calls, spend.unlogged_calls) == (1, 2)
    assert spend.logged_usd == Decimal("0.002") and spend.unlogged_usd >= Decimal("0.025")


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    journal_some_calls(tmp_path)
    with open(tmp_path / JOURNAL_NAME, "a") as f:
        f.write('{"schema":1,"kind":"call","seq":4,"reser')
    assert 4 not in [e.seq for e in read_journal(tmp_path) if isinstance(e, JournalCall)]


def test_a_line_that_is_no_entry_is_refused(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_NAME).write_text('{"schema":1,"kind":"call","seq":1}\n')
    with pytest.raises(RunDirError, match=f"{JOURNAL_NAME}:1: not a reservation journal entry"):
        recover_spend(tmp_path)
    (tmp_path / JOURNAL_NAME).write_text('{"schema":2,"kind":"block","usd":"1"}\n')
    with pytest.raises(RunDirError, match="upgrade harness"):
        recover_spend(tmp_path)


def test_a_run_without_a_journal_recovers_nothing_unlogged(tmp_path: Path) -> None:
    assert recover_spend(tmp_path).unlogged_calls == 0


def test_a_call_that_left_before_its_line_was_written_is_still_charged(tmp_path: Path) -> None:
    # kill -9 between a call's going out and its `call` line: the block it drew from is durable.
    async def cover_three_note_one() -> None:
        journal = ReservationJournal(tmp_path)
        for _ in range(3):
            await journal.cover(Decimal("0.0125"))
        journal.note_call(1, Decimal("0.0125"), "claude-x", "anthropic.messages")
        await journal.drain()
        journal.close()

    asyncio.run(cover_three_note_one())
    spent = recover_spend(tmp_path)
    assert spent.unlogged_usd >= Decimal("0.0375")
    assert spent.unlogged_calls == 1  # the one line written
