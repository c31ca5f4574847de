"""Dates as the two datasets write them, parsed strictly (a date that does not parse is a bad
field, never a guess): LongMemEval `2023/05/20 (Sat) 02:21`, LoCoMo `1:56 pm on 8 May, 2023`.
Both are naive local times with no zone; the harness treats a naive clock as UTC everywhere
(harness/isolation/clock.py), so they are kept naive."""

from __future__ import annotations

import re
from datetime import datetime

_LONGMEMEVAL = re.compile(r"(\d{4}/\d{2}/\d{2}) \((\w{3})\) (\d{1,2}:\d{2})")
_LOCOMO = re.compile(r"(\d{1,2}:\d{2}) ?([ap]m) on (\d{1,2}) (\w+),? (\d{4})", re.IGNORECASE)


def longmemeval_date(text: str) -> datetime:
    """`2023/05/20 (Sat) 02:21`; the weekday must agree with the date."""
    match = _LONGMEMEVAL.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a date like '2023/05/20 (Sat) 02:21'")
    day, weekday, time = match.groups()
    when = datetime.strptime(f"{day} {time}", "%Y/%m/%d %H:%M")
    if when.strftime("%a") != weekday:
        raise ValueError(f"{text!r}: {day} is a {when.strftime('%a')}, not a {weekday}")
    return when


def locomo_date(text: str) -> datetime:
    """`1:56 pm on 8 May, 2023` (full or abbreviated month names)."""
    match = _LOCOMO.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a date like '1:56 pm on 8 May, 2023'")
    time, half, day, month, year = match.groups()
    for month_format in ("%B", "%b"):
        try:
            return datetime.strptime(
                f"{time} {half.upper()} {day} {month} {year}", f"%I:%M %p %d {month_format} %Y"
            )
        except ValueError:
            continue
    raise ValueError(f"{text!r}: {month!r} is not a month")
