"""A ledger's real identity, so its locks are one lock however the ledger is named.

Two studies may name one ledger file by different paths (a symlink, `..`, a bind mount of its
folder): the live-job slot and the append lock must still be one lock, or two live jobs hold the
keys of one ledger at once. The locks of a file ledger therefore sit beside its resolved path
(every symlink followed), and a ledger file with a second name (a hard link, which no path
resolution can see) is refused. A PostgreSQL ledger's locks are the server's own advisory locks,
taken in its database and keyed by its schema, so any URL that reaches them reaches the same.
"""

from __future__ import annotations

import os
from pathlib import Path

from ledger.errors import LedgerError


def resolved_ledger(path: Path) -> Path:
    """The file every name of this ledger leads to; its locks are named after it.

    Refuses (LedgerError) a ledger file with more than one hard link: its other name would
    resolve elsewhere and lock apart from this one.
    """
    real = Path(os.path.realpath(path))
    try:
        links = real.stat().st_nlink
    except FileNotFoundError:
        return real  # no file yet: its one name is the resolved path
    except OSError as e:
        raise LedgerError(f"cannot read the ledger {path}: {e.strerror}") from e
    if links > 1:
        raise LedgerError(
            f"the ledger {path} has {links} hard links: its names could lock apart; keep one "
            "name (a symlink to it is fine)"
        )
    return real
