"""The audit's re-check of the OS rule on the proxy's own traffic (issue 29 item 6), from
proxy_egress.jsonl (rundir/network/proxy_egress.py) and run.json alone.

- the file parses, line by line (a damaged line is named);
- run.json's `proxy_refused` is the file's count by destination and kind: a refusal deleted from
  the file, or from run.json, is a discrepancy;
- a run whose file holds any refusal did not pass: a run.json saying `passed: true` over a log
  with refused or https_unresolved entries is a discrepancy (the run should have failed).
The file's bytes against the manifest are the `file` check's; this one checks what they say.
"""

from __future__ import annotations

from pathlib import Path

from rundir.errors import RunDirError
from rundir.network import PROXY_EGRESS_FILE, by_destination, read_proxy_egress
from rundir.runs import RunHeader


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{dest} x{n}" for dest, n in sorted(counts.items())) or "nothing"


def proxy_egress_findings(run_dir: Path, header: RunHeader) -> list[tuple[str, str]]:
    """Discrepancies as (where, detail) between proxy_egress.jsonl and run.json."""
    path = run_dir / PROXY_EGRESS_FILE
    try:
        entries = read_proxy_egress(path)
    except RunDirError as e:
        return [(PROXY_EGRESS_FILE, f"does not parse: {str(e).removeprefix(str(path) + ':')}")]
    except (OSError, UnicodeDecodeError) as e:
        return [(PROXY_EGRESS_FILE, f"cannot be read: {e}")]
    logged = by_destination(entries)
    study = header.study
    if study is None:  # a `harness proxy serve` run: no verdict to hold it against
        return []
    found: list[tuple[str, str]] = []
    if study.proxy_refused != logged:
        found.append(
            (
                f"run.json proxy_refused / {PROXY_EGRESS_FILE}",
                f"run.json says the proxy was refused {_counts(study.proxy_refused)}; "
                f"{PROXY_EGRESS_FILE} holds {_counts(logged)}",
            )
        )
    if study.passed and (logged or study.proxy_refused):
        found.append(
            (
                "run.json passed",
                "the run says it passed, but the proxy itself tried connections outside its "
                f"vendors ({_counts(logged or study.proxy_refused)}): it should have failed",
            )
        )
    return found
