"""The one reader of an amount of US dollars as a user writes it (every `--cap`, `--stage-cap`,
`HARNESS_CAP`, a study's `stage_cap`, the caps the live proxy is started with): a plain decimal
number of dollars, nothing else.

`$10`, `10 USD`, `1e3`, `abc`, `-5`, `NaN` and `Infinity` are refused, each in one line that names
the option and shows what to write: a cap the user did not mean must never reach the ledger.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ledger.errors import LedgerError

# Digits with at most one point: what every example in the docs writes (10, 2.50, .5).
_PLAIN = re.compile(r"\d+(\.\d*)?|\.\d+")


class BadAmount(LedgerError):
    """An option's value is not an amount of USD this harness accepts."""


def parse_usd(
    text: str, option: str = "--cap", *, allow_zero: bool = False, example: str = ""
) -> Decimal:
    """`text` as dollars, or BadAmount naming `option` and saying what to write (`example`: how,
    for a value that is not a flag's, e.g. a study file's field)."""
    value = text.strip()
    example = example or f"e.g. {option} 10 or {option} 2.50"
    if not _PLAIN.fullmatch(value):
        why = "is not an amount in USD"
        if value.startswith("-"):
            why = "is negative; a cap is a positive amount in USD"
        elif value.startswith("$") or value.upper().endswith("USD"):
            why = "is not an amount in USD: write the number of dollars alone, no $ or USD"
        raise BadAmount(f"{option} {text!r} {why} ({example})")
    amount = Decimal(value)
    if amount == 0 and not allow_zero:
        raise BadAmount(f"{option} {text!r} is zero; a cap is a positive amount in USD ({example})")
    return amount
