"""What a live run (or a pilot, or a live `proxy serve`) needs, checked before anything starts or
any ledger entry is written: each refusal one line naming the option or variable to fix.

- the cap: the one USD reader (ledger/usd.py), so `abc`, `-5` or `$10` never reach a proxy;
- the vendor keys: every vendor the study's record run called needs its key in this
  environment (the proxy inherits it), else the run would fail after its stage was opened;
- the ledger's git branch: its repository must exist, and a branch that is missing while the
  ledger already holds entries (deleted, or a mistyped name) is refused unless the user asks to
  start a new one: it would otherwise silently begin a new history beside the real one.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

from harness.errors import HarnessError
from ledger.errors import LedgerError
from ledger.git_branch import LedgerBranch, head, require_repo
from ledger.ledger import Location, chain_end
from ledger.usd import BadAmount, parse_usd

# Where the proxy reads each vendor's key (proxy/live/call.py's KEY_ENV: harness/ may not import
# the proxy; tests/run/live/test_live_checks.py holds the two equal).
KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "cohere": "CO_API_KEY",
    "voyage": "VOYAGE_API_KEY",
}
NEW_BRANCH_FLAG = "--new-ledger-branch"


def cap_usd(text: str, option: str = "--cap", *, allow_zero: bool = False) -> Decimal:
    """The cap in dollars, or HarnessError in one line naming the option (zero: a closed stage,
    where `allow_zero`)."""
    try:
        return parse_usd(text, option, allow_zero=allow_zero)
    except BadAmount as e:
        raise HarnessError(str(e)) from None


def vendors_called(run_dir: Path) -> set[str]:
    """The vendors a run's call log names."""
    found: set[str] = set()
    calls = run_dir / "calls.jsonl"
    if not calls.is_file():
        return found
    with open(calls, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                vendor = json.loads(line).get("vendor")
                if isinstance(vendor, str):
                    found.add(vendor)
    return found


def check_keys(vendors: set[str]) -> None:
    """Each vendor's key set (at least one key when none is named): the proxy gets the keys
    from this environment, and finding one missing after the stage opened leaves it open."""
    wanted = sorted(KEY_ENV[v] for v in vendors if v in KEY_ENV) or sorted(KEY_ENV.values())
    present = [name for name in wanted if os.environ.get(name)]
    missing = [name for name in wanted if not os.environ.get(name)]
    if vendors and missing:
        raise HarnessError(
            f"{', '.join(missing)} is not set: the study's record run called "
            f"{', '.join(sorted(vendors))}; export the key(s) before a live run"
        )
    if not present:
        raise HarnessError(f"no vendor key is set: export {' or '.join(wanted)} for a live run")


def check_branch(branch: LedgerBranch | None, ledger: Location, *, new_branch: bool) -> None:
    """The ledger's repository exists; its branch exists, or may start (a fresh ledger, or
    `--new-ledger-branch`)."""
    if branch is None:
        return
    try:
        require_repo(branch)
        if head(branch) is not None or new_branch:
            return
        held = chain_end(ledger)
    except LedgerError as e:
        raise HarnessError(f"ledger_repo: {e}") from None
    if held is not None and held[0] > 0:
        raise HarnessError(
            f"ledger_branch {branch.branch!r} does not exist in {branch.repo}, but the ledger "
            f"already holds {held[0]} entries: a deleted or mistyped branch would start a new "
            f"history; fix ledger_branch (or $HARNESS_LEDGER_BRANCH), or pass {NEW_BRANCH_FLAG} "
            "to start one"
        )
