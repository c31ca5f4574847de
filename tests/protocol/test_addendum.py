"""The addendum's entries, and which are a run's deviations (harness/protocol/addendum.py)."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.protocol.addendum import deviations, parse_addendum, removed_since, run_deviations

STARTED = "2024-05-01T10:00:00.000+00:00"


def _addendum(*entries: str) -> bytes:
    return "\n".join(f"[[entry]]\n{e}\n" for e in entries).encode()


AMENDED_AFTER = 'date = 2024-05-01T10:30:00Z\nkind = "amendment"\ntext = "t"\nreason = "r"'
AMENDED_BEFORE = 'date = 2024-05-01T09:59:59Z\nkind = "amendment"\ntext = "t"\nreason = "r"'
AMENDED_THAT_DAY = 'date = 2024-05-01\nkind = "amendment"\ntext = "t"\nreason = "r"'
AMENDED_DAY_BEFORE = 'date = "2024-04-30"\nkind = "amendment"\ntext = "t"\nreason = "r"'
DEVIATION = 'date = 2024-01-01\nkind = "deviation"\ntext = "found later"'
RECORD = 'date = 2024-05-02\nkind = "record"\ntext = "pilot median 1 s"'


def test_an_amendment_after_a_live_run_started_is_its_deviation() -> None:
    addendum = parse_addendum(_addendum(AMENDED_AFTER, AMENDED_BEFORE, RECORD), "a.toml")
    found = deviations(addendum, "live", STARTED)
    assert [d.entry.when for d in found] == ["2024-05-01T10:30:00+00:00"]
    assert "after this live run started" in found[0].why
    # A record run is a free rehearsal: amendments are not its deviations.
    assert deviations(addendum, "record", STARTED) == []


def test_a_date_without_a_time_on_the_runs_day_counts_as_after_it() -> None:
    addendum = parse_addendum(_addendum(AMENDED_THAT_DAY, AMENDED_DAY_BEFORE), "a.toml")
    found = deviations(addendum, "live", STARTED)
    assert [d.entry.when for d in found] == ["2024-05-01"]
    assert "give its date a time" in found[0].why


def test_a_time_without_an_offset_is_utc() -> None:
    entry = 'date = 2024-05-01T10:00:01\nkind = "amendment"\ntext = "t"\nreason = "r"'
    assert len(deviations(parse_addendum(_addendum(entry), "a"), "live", STARTED)) == 1
    early = entry.replace("10:00:01", "09:00:00")
    assert deviations(parse_addendum(_addendum(early), "a"), "live", STARTED) == []


def test_every_recorded_deviation_is_reported_in_every_mode() -> None:
    addendum = parse_addendum(_addendum(DEVIATION, RECORD), "a.toml")
    for mode in ("record", "live", "replay"):
        assert [d.why for d in deviations(addendum, mode, STARTED)] == ["recorded deviation"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('date = 2024-05-01\nkind = "amendment"\ntext = "t"', "entry 1: an amendment needs"),
        ('date = 2024-05-01\nkind = "note"\ntext = "t"', "entry 1 kind"),
        ('kind = "record"\ntext = "t"', "entry 1 date"),
        ('date = 2024-05-01\nkind = "record"\ntext = ""', "entry 1 text"),
        ('date = 2024-05-01\nkind = "record"\ntext = "t"\nby = "me"', "entry 1 by"),
    ],
)
def test_a_malformed_entry_is_refused_naming_it(text: str, says: str) -> None:
    with pytest.raises(HarnessError) as caught:
        parse_addendum(_addendum(text), "protocol/addendum.toml")
    assert caught.value.message.startswith("addendum protocol/addendum.toml: ")
    assert says in caught.value.message


def test_an_addendum_that_is_not_toml_is_refused() -> None:
    with pytest.raises(HarnessError, match="is not valid TOML"):
        parse_addendum(b"[[entry]\n", "a.toml")
    assert parse_addendum(b"", "a.toml").entry == []


WITHDRAWN = (
    'date = 2024-04-29T09:00:00Z\nkind = "withdrawal"\nfile = "p/0c.md"\ntext = "t"\nreason = "r"'
)


def test_a_withdrawal_names_its_file_and_reason_and_is_listed() -> None:
    assert parse_addendum(_addendum(WITHDRAWN), "a").withdrawn() == {"p/0c.md"}
    for cut, says in (('file = "p/0c.md"\n', "names the frozen file"), ('reason = "r"', "reason")):
        with pytest.raises(HarnessError, match=says):
            parse_addendum(_addendum(WITHDRAWN.replace(cut, "")), "a")


def test_an_amendment_backdated_before_a_live_run_but_not_in_its_copy_is_its_deviation() -> None:
    copy = parse_addendum(_addendum(RECORD), "copy")
    now = parse_addendum(_addendum(RECORD, AMENDED_BEFORE, AMENDED_AFTER, DEVIATION), "now")
    found = run_deviations(copy, now, "live", STARTED)
    assert [(d.entry.when, d.why.split(":")[0]) for d in found] == [
        ("2024-05-01T09:59:59+00:00", "amendment dated before this live run but missing from "
         "the run's copy of the addendum"),
        ("2024-05-01T10:30:00+00:00", "amendment dated after this live run started"),
        ("2024-01-01", "deviation recorded after the run"),
    ]  # fmt: skip
    assert "backdated" in found[0].why
    # Held by the run's copy, the same amendment is no deviation: it preceded the run.
    assert run_deviations(parse_addendum(_addendum(AMENDED_BEFORE), "c"), now, "live", STARTED)[
        0
    ].entry.when.startswith("2024-05-01T10:30")


def test_an_entry_deleted_from_the_study_since_the_run_stays_the_runs() -> None:
    copy = parse_addendum(_addendum(DEVIATION, RECORD), "copy")
    now = parse_addendum(_addendum(RECORD), "now")  # the deviation was deleted afterwards
    assert [d.why for d in run_deviations(copy, now, "record", STARTED)] == ["recorded deviation"]
    assert [e.kind for e in removed_since(copy, now)] == ["deviation"]
