"""The one USD reader (ledger/usd.py): plain dollar amounts in, everything else refused in one
line that names the option and shows what to write."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ledger.usd import BadAmount, parse_usd


@pytest.mark.parametrize(
    ("text", "value"), [("10", Decimal(10)), ("2.50", Decimal("2.50")), (".5", Decimal("0.5"))]
)
def test_plain_amounts_are_read_exactly(text: str, value: Decimal) -> None:
    assert parse_usd(text) == value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("abc", "is not an amount in USD"),
        ("-5", "is negative"),
        ("$10", "no $ or USD"),
        ("10 USD", "no $ or USD"),
        ("1e3", "is not an amount in USD"),
        ("NaN", "is not an amount in USD"),
        ("Infinity", "is not an amount in USD"),
        ("", "is not an amount in USD"),
        ("0", "is zero"),
    ],
)
def test_anything_else_is_refused_in_one_line_naming_the_option(text: str, words: str) -> None:
    with pytest.raises(BadAmount) as e:
        parse_usd(text, "--stage-cap")
    message = str(e.value)
    assert message.startswith(f"--stage-cap {text!r} ") and words in message
    assert "e.g. --stage-cap 10" in message and "\n" not in message


def test_zero_is_an_amount_where_the_caller_allows_it() -> None:
    assert parse_usd("0", allow_zero=True) == 0
