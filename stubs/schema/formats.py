"""String formats JSON Schema names, generated deterministically for schema_instance.

Each generator hashes only the caller's digest and JSON path, so a format's value is the same
on every machine. Values use reserved example domains and documentation address ranges, so a
stub never names a real host.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import date
from functools import partial
from typing import Protocol

_NAMES = ("ada", "grace", "alan", "edsger", "barbara", "donald", "frances", "ken")
_HOSTS = ("example.com", "example.org", "example.net")
_BASE_DAY = 739252  # date(2025, 1, 1).toordinal(): fixed, never the clock


class Chooser(Protocol):
    digest: bytes

    def pick(self, path: str, n: int) -> int: ...

    def word(self, path: str) -> str: ...


def _date(w: Chooser, path: str) -> str:
    return date.fromordinal(_BASE_DAY + w.pick(path + "#d", 365)).isoformat()


def _time(w: Chooser, path: str) -> str:
    s = w.pick(path + "#t", 86400)
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"


def _uuid(version: int, w: Chooser, path: str) -> str:
    hex32 = hashlib.blake2b(w.digest + path.encode(), digest_size=16).hexdigest()
    # Version digit and RFC 4122 variant set, so strict checkers (pydantic's UUIDn) accept it.
    h = hex32[:12] + str(version) + hex32[13:16] + "8" + hex32[17:]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


FORMATS: dict[str, Callable[[Chooser, str], str]] = {
    "date": _date,
    "time": _time,
    "date-time": lambda w, p: f"{_date(w, p)}T{_time(w, p)}",
    "email": lambda w, p: f"{_NAMES[w.pick(p, len(_NAMES))]}@{_HOSTS[w.pick(p + '#h', 3)]}",
    "uuid": partial(_uuid, 4),
    # pydantic's UUID1..UUID5 types emit these and check the version digit when parsing.
    **{f"uuid{v}": partial(_uuid, v) for v in range(1, 6)},
    "duration": lambda w, p: f"PT{w.pick(p, 59) + 1}M",
    "uri": lambda w, p: f"https://{_HOSTS[w.pick(p + '#h', 3)]}/{w.word(p)}",
    "url": lambda w, p: f"https://{_HOSTS[w.pick(p + '#h', 3)]}/{w.word(p)}",
    "ipv4": lambda w, p: f"192.0.2.{w.pick(p, 254) + 1}",  # TEST-NET-1: never a real host
    "ipv6": lambda w, p: f"2001:db8::{w.pick(p, 65535) + 1:x}",  # documentation prefix
    "hostname": lambda w, p: f"{w.word(p)}.{_HOSTS[w.pick(p + '#h', 3)]}",
}
