"""Refused connections are attributed from the harness's own evidence (harness/isolation/egress.py)
and the arms' DNS server names what was looked up (harness/isolation/dns_refuser.py)."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from pathlib import Path

import pytest

from harness.isolation import egress
from harness.isolation.dns_refuser import REFUSED, serve
from harness.isolation.egress_book import EgressBook


def write_guard_lines(run_dir: Path, arm: str, lines: list[str]) -> None:
    egress.guard_log(run_dir, arm).write_text("".join(line + "\n" for line in lines))


def test_every_line_in_an_arms_folder_is_that_arms(tmp_path: Path) -> None:
    honest = {"schema": 1, "arm": "a", "destination": "10.0.0.1:80", "time": "2024-05-01"}
    blaming = {**honest, "arm": "b", "destination": "evil.example:443"}
    posing = {**honest, "source": "kernel"}
    write_guard_lines(
        tmp_path,
        "a",
        [json.dumps(honest), json.dumps(blaming), json.dumps(posing), "not json {", "[1, 2]"],
    )
    entries = egress.guard_entries(tmp_path, ["a", "b"])
    assert [e["arm"] for e in entries] == ["a"] * 5
    assert "flags" not in entries[0] and entries[0]["source"] == "guard"
    assert entries[1]["flags"] == ["forged"] and entries[1]["claimed_arm"] == "b"
    assert entries[2]["flags"] == ["forged"] and entries[2]["source"] == "guard"
    assert [e["flags"] for e in entries[3:]] == [["unreadable"], ["unreadable"]]


def test_a_hostile_time_or_a_huge_line_does_not_stop_the_count(tmp_path: Path) -> None:
    lines = [
        json.dumps({"arm": "a", "destination": "x" * 10_000, "time": "9999-12-31T23:59:59"}),
        json.dumps({"arm": "a", "destination": "y:1", "time": {"nested": True}}),
    ]
    write_guard_lines(tmp_path, "a", lines)
    entries = egress.guard_entries(tmp_path, ["a"])
    history = {"a": [(0.0, -(10**12))]}  # an offset that pushes the time past year 9999
    converted = [egress.real_time(e, history) for e in entries]
    assert len(converted) == 2 and all(len(str(e["destination"])) <= 300 for e in converted)
    added = EgressBook(tmp_path / "egress.jsonl").add(converted)
    assert len(added) == 2 and len((tmp_path / "egress.jsonl").read_text().splitlines()) == 2


def test_an_arm_name_cannot_point_outside_the_run(tmp_path: Path) -> None:
    for name in ("../x", ".hidden", "a/b", ""):
        with pytest.raises(ValueError):
            egress.guard_log(tmp_path, name)


def query(name: str, ident: int = 0x1234) -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\0" + b"\0\x01\0\x01"


def test_the_dns_refuser_refuses_and_names_the_host_per_arm(tmp_path: Path) -> None:
    log = tmp_path / "dns.jsonl"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Two arms, two local addresses: a query is the arm's whose address it was sent to.
    config = {
        "dns": {"log": str(log), "port": port},
        "arm_hosts": {"a": "127.0.0.1", "b": "127.0.0.2"},
    }

    async def scenario() -> list[bytes]:
        server = asyncio.create_task(serve(config))
        await asyncio.sleep(0.3)
        answers = []
        for host, name in (("127.0.0.1", "exfiltrate.example"), ("127.0.0.2", "other.test")):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
                client.settimeout(3)
                client.sendto(query(name), (host, port))
                answers.append(await asyncio.to_thread(client.recv, 512))
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
                client.sendto(b"\xff" * 3, (host, port))  # not a query: logged, not answered
        await asyncio.sleep(0.2)
        server.cancel()
        return answers

    answers = asyncio.run(scenario())
    for answer in answers:
        ident, flags = struct.unpack("!HH", answer[:4])
        assert ident == 0x1234 and flags & 0x8000 and flags & 0xF == REFUSED
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    named = [(e["arm"], e["destination"], e["query_type"]) for e in entries]
    assert named == [
        ("a", "exfiltrate.example", "A"),
        ("a", "?", "malformed"),
        ("b", "other.test", "A"),
        ("b", "?", "malformed"),
    ]
    assert all(e["source"] == "dns" for e in entries)


def test_a_symlink_an_arm_planted_is_not_followed(tmp_path: Path) -> None:
    write_guard_lines(tmp_path, "b", [json.dumps({"arm": "b", "destination": "b:1", "time": "t"})])
    planted = egress.guard_log(tmp_path, "a")
    planted.symlink_to("/dev/zero")  # read through, it would never end
    assert egress.guard_entries(tmp_path, ["a"]) == []
    planted.unlink()
    planted.symlink_to(egress.guard_log(tmp_path, "b"))  # b's lines must not be read as a's
    assert egress.guard_entries(tmp_path, ["a"]) == []
    assert [e["arm"] for e in egress.guard_entries(tmp_path, ["a", "b"])] == ["b"]
