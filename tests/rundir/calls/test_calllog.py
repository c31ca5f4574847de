from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from rundir.calls.bodies import BodyStore
from rundir.calls.calllog import CallLog, CallRecord, Timing, read_calls
from tests.proxy.small_disk import fill, mounted_tmpfs


def _record(seq: int) -> CallRecord:
    return CallRecord(
        run_id="r",
        seq=seq,
        mode="record",
        arm="a",
        purpose="main",
        vendor="openai",
        route="openai.chat",
        method="POST",
        path="/v1/chat/completions",
        status=200,
        outcome="ok",
        request_hash="0" * 64,
        timing=Timing(start=1.0),
    )


def test_records_round_trip_and_numbering_resumes(tmp_path: Path) -> None:
    log = CallLog(tmp_path / "calls.jsonl")
    log.append(_record(log.next_seq()))
    log.append(_record(log.next_seq()))
    log.close()
    resumed = CallLog(tmp_path / "calls.jsonl")
    assert resumed.next_seq() == 3
    resumed.close()
    assert [r.seq for r in read_calls(tmp_path / "calls.jsonl")] == [1, 2]


def test_unknown_schema_is_an_error_not_a_misread(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(_record(1).to_line().replace('"schema":1', '"schema":99'))
    with pytest.raises(ValueError, match="schema"):
        read_calls(path)


def test_bodies_are_content_addressed_and_tamper_evident(tmp_path: Path) -> None:
    store = BodyStore(tmp_path / "bodies")
    digest = store.put(b'{"hello": "world"}')
    other = store.put(b"second body")
    assert store.put(b'{"hello": "world"}') == digest
    store.sync()
    assert store.get(digest) == b'{"hello": "world"}'
    store.close()
    reopened = BodyStore(tmp_path / "bodies")
    assert reopened.get(other) == b"second body" and digest in reopened
    reopened.close()
    pack = tmp_path / "bodies" / "pack.bin"
    data = bytearray(pack.read_bytes())
    data[-3] ^= 0xFF  # flip a byte of the last frame
    pack.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="altered"):
        BodyStore(tmp_path / "bodies").get(other)


def test_a_torn_last_body_is_cut_off_and_the_rest_kept(tmp_path: Path) -> None:
    store = BodyStore(tmp_path / "bodies")
    kept = store.put(b"kept body")
    store.close()
    with open(tmp_path / "bodies" / "pack.bin", "ab") as f:
        f.write(b"f" * 64 + b" 999\npartial")
    reopened = BodyStore(tmp_path / "bodies")
    assert reopened.get(kept) == b"kept body"
    later = reopened.put(b"after the crash")
    reopened.close()
    assert BodyStore(tmp_path / "bodies").get(later) == b"after the crash"


def test_unwritable_log_raises(tmp_path: Path) -> None:
    from rundir.calls.calllog import CallLogError

    log = CallLog(tmp_path / "calls.jsonl")
    log._file.close()
    with pytest.raises(CallLogError):
        log.append(_record(1))


def test_a_body_the_full_disk_tore_leaves_the_pack_whole_for_the_next(tmp_path: Path) -> None:
    """A write the disk could only take part of is cut off at once: a body stored once there is
    room again is found where the index says, in this process and after a reopen."""
    with mounted_tmpfs(tmp_path / "disk") as disk:
        store = BodyStore(disk / "bodies")
        first = store.put(b"a small body")
        fill(disk)
        with pytest.raises(OSError):
            store.put(secrets.token_hex(8192).encode())  # random: its frame does not fit
        (disk / "filler").unlink()
        later = store.put(b"a body stored once there is room")
        assert store.get(first) == b"a small body"
        assert store.get(later) == b"a body stored once there is room"
        reopened = BodyStore(disk / "bodies")
        assert sorted(reopened.digests()) == sorted([first, later])
        assert reopened.get(later) == b"a body stored once there is room"
