"""egress.jsonl is appended, never rewritten: each source line read once, repeats counted, the
first attempt at a destination a line of its own (harness/isolation/egress_book.py), and the
kernel-log follower's lines and the firewall's counters say what was lost (kernel_log.py)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.isolation import egress
from harness.isolation.egress_book import READ_MAX, EgressBook, attempts
from harness.isolation.firewall import kernel_attempts
from harness.isolation.kernel_log import dropped
from harness.isolation.kmsg_follow import parse
from harness.run.watch.strays import by_destination


def guard_line(destination: str, time: str, arm: str = "a") -> str:
    return json.dumps({"arm": arm, "destination": destination, "time": time}) + "\n"


def dns_line(name: str, time: str) -> str:
    entry = {"arm": "a", "destination": name, "time": time, "source": "dns", "query_type": "A"}
    return json.dumps(entry) + "\n"


def look(book: EgressBook, run_dir: Path) -> list[dict[str, object]]:
    new = egress.guard_entries(run_dir, ["a"], book) + egress.proxy_entries(run_dir, book)
    return book.add(new)


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_line_once_written_stays_and_each_source_line_counts_once(tmp_path: Path) -> None:
    book = EgressBook(tmp_path / "egress.jsonl")
    log = egress.guard_log(tmp_path, "a")
    log.write_text(guard_line("10.0.0.1:80", "2026-01-01T00:00:00.001"))
    assert len(look(book, tmp_path)) == 1
    written = (tmp_path / "egress.jsonl").read_text()
    assert look(book, tmp_path) == []  # looking again adds nothing
    with open(log, "a") as f:
        f.write(guard_line("10.0.0.2:80", "2026-01-01T00:00:01"))
        f.write('{"arm": "a", "destination": "half')  # still being written: waits
    assert [e["destination"] for e in look(book, tmp_path)] == ["10.0.0.2:80"]
    assert (tmp_path / "egress.jsonl").read_text().startswith(written)  # appended, not rewritten
    with open(log, "a") as f:
        f.write('-written:1", "time": "2026-01-01T00:00:02"}\n')
    assert [e["destination"] for e in look(book, tmp_path)] == ["half-written:1"]
    assert [e["line"] for e in book.entries] == [1, 2, 3]


def test_a_burst_is_counted_and_never_hides_the_first_attempt(tmp_path: Path) -> None:
    book = EgressBook(tmp_path / "egress.jsonl")
    real = guard_line("172.17.0.1:8080", "2026-01-01T00:00:00.000")
    burst = [guard_line("172.17.0.1:9", f"2026-01-01T00:00:00.{n:03d}") for n in range(1, 501)]
    egress.guard_log(tmp_path, "a").write_text(real + "".join(burst))
    added = look(book, tmp_path)
    # The real attempt, the burst's first, then the rest of the burst as one counted line.
    assert [(e["destination"], attempts(e)) for e in added] == [
        ("172.17.0.1:8080", 1),
        ("172.17.0.1:9", 1),
        ("172.17.0.1:9", 499),
    ]
    assert added[2]["time"] == "2026-01-01T00:00:00.002"
    assert added[2]["last_time"] == "2026-01-01T00:00:00.500"
    assert by_destination(lines(tmp_path / "egress.jsonl")) == {
        "a": {"172.17.0.1:8080": 1, "172.17.0.1:9": 500}
    }


def test_refused_lookups_of_one_name_in_one_millisecond_are_each_counted(tmp_path: Path) -> None:
    book = EgressBook(tmp_path / "egress.jsonl")
    dns = egress.proxy_log(tmp_path).with_name("dns.jsonl")
    dns.write_text(dns_line("exfil.example", "2026-01-01T00:00:00.001") * 40)
    look(book, tmp_path)
    with open(dns, "a") as f:
        f.write(dns_line("exfil.example", "2026-01-01T00:00:00.001") * 2)
    look(book, tmp_path)
    assert by_destination(book.entries) == {"a": {"exfil.example": 42}}


def test_a_guard_log_its_arm_rewrote_is_read_again_and_flagged(tmp_path: Path) -> None:
    book = EgressBook(tmp_path / "egress.jsonl")
    log = egress.guard_log(tmp_path, "a")
    log.write_text(guard_line("10.0.0.1:80", "t1") + guard_line("10.0.0.1:81", "t2"))
    look(book, tmp_path)
    log.write_text(guard_line("10.0.0.9:1", "t3"))  # shorter: the arm erased what it wrote
    (added,) = look(book, tmp_path)
    assert added["destination"] == "10.0.0.9:1" and added["flags"] == ["rewritten"]
    assert len(book.entries) == 3  # what was read before stays in the book and the file


def test_kernel_lines_and_the_firewall_counters_name_what_was_lost(tmp_path: Path) -> None:
    prefixes = {"harness abc123 a ": "a", "harness abc123 b ": "b"}
    message = "harness abc123 a IN=br-1 OUT= SRC=10.9.0.2 DST=10.9.0.1 PROTO=TCP SPT=5 DPT={}"
    followed = [f"2026-01-01T00:00:00.{n:06d}+00:00 {message.format(n)}" for n in (8080, 1, 2)]
    found = kernel_attempts(prefixes, followed)
    assert [e["destination"] for e in found] == ["10.9.0.1:8080", "10.9.0.1:1", "10.9.0.1:2"]
    assert all(e["arm"] == "a" and e["source"] == "kernel" for e in found)
    book = EgressBook(tmp_path / "egress.jsonl")
    book.add(found)
    counts = {"harness abc123 a ": 1501, "harness abc123 b ": 0}
    assert dropped(counts, prefixes, book.entries) == {"a": 1498}
    assert dropped({"harness abc123 a ": 3}, prefixes, book.entries) == {}


def test_a_kmsg_record_is_read_with_its_sequence_and_time() -> None:
    record = b"4,1234,5000000,-;harness abc123 a IN=br-1 DST=10.0.0.1\n SUBSYSTEM=net\n"
    assert parse(record) == (1234, 5.0, "harness abc123 a IN=br-1 DST=10.0.0.1")
    assert parse(b"garbage") is None


def test_a_log_the_harness_copied_out_is_not_read_twice(tmp_path: Path) -> None:
    book = EgressBook(tmp_path / "egress.jsonl")
    log = egress.guard_log(tmp_path, "a")
    log.write_text(guard_line("10.0.0.1:80", "t1"))
    look(book, tmp_path)
    copy = log.with_name("copy")
    copy.write_bytes(log.read_bytes())
    copy.replace(log)  # a new file with the same lines: the arm's disk copied into the run
    book.moved(log)
    assert look(book, tmp_path) == []
    with open(log, "a") as f:
        f.write(guard_line("10.0.0.2:80", "t2"))
    assert [e["destination"] for e in look(book, tmp_path)] == ["10.0.0.2:80"]


def test_a_line_that_never_ends_cannot_hide_the_next_ones(tmp_path: Path) -> None:
    book = EgressBook(tmp_path / "egress.jsonl")
    log = egress.guard_log(tmp_path, "a")
    log.write_bytes(b"x" * READ_MAX)
    (flooded,) = look(book, tmp_path)
    assert flooded["flags"] == ["unreadable"]
    with open(log, "a") as f:
        f.write("\n" + guard_line("10.0.0.1:80", "t1"))
    assert [e["destination"] for e in look(book, tmp_path)] == ["10.0.0.1:80"]


def test_a_workers_copy_is_written_as_its_arm_with_the_worker(tmp_path: Path) -> None:
    """--workers: a guard log of copy `a@2` (its own folder) becomes arm `a`, worker 2, in
    egress.jsonl; per arm counts sum the copies; the kernel log's counters stay per copy."""
    book = EgressBook(tmp_path / "egress.jsonl")
    for arm in ("a", "a@2"):
        egress.guard_log(tmp_path, arm).write_text(guard_line("10.0.0.1:80", "t1", arm))
    book.add(egress.guard_entries(tmp_path, ["a", "a@2"], book))
    written = [json.loads(x) for x in (tmp_path / "egress.jsonl").read_text().splitlines()]
    assert sorted((e["arm"], e.get("worker", 0)) for e in written) == [("a", 0), ("a", 2)]
    assert not any("flags" in e for e in written)  # the copy's guard named itself: not forged
    assert by_destination(book.entries) == {"a": {"10.0.0.1:80": 2}}
    prefixes = {"harness abc123 a ": "a", "harness abc123 a@2 ": "a@2"}
    line = "2026-01-01T00:00:00+00:00 harness abc123 a@2 IN=br-2 DST=10.9.0.1 PROTO=TCP DPT=9"
    found = kernel_attempts(prefixes, [line])
    book.add(found)
    assert book.entries[-1]["arm"] == "a" and book.entries[-1]["worker"] == 2
    counts = {"harness abc123 a ": 0, "harness abc123 a@2 ": 3}
    assert dropped(counts, prefixes, book.entries) == {"a@2": 2}  # one of three was logged
