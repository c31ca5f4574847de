"""Headless Chromium: prints the HTML report to PDF (and, in tests, screenshots it).

Started with every background service off (no network, component updates, sync, QUIC, first-run
page) and a new empty profile per use, so a print is reproducible and sends nothing anywhere;
the page's own Content-Security-Policy stops it loading anything too. Flags:
https://developer.chrome.com/docs/chromium/headless (`--print-to-pdf`, `--screenshot`,
`--no-pdf-header-footer`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.errors import HarnessError

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
QUIET_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    # Seen here: even with the flags above Chromium's own services (time, update, accounts) ask
    # google.com hosts; resolving no host name at all keeps them from leaving the machine.
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
TIMEOUT_S = 180


def find_chromium() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def run_chromium(page: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """Open `page` in headless Chromium with `flags` (e.g. --print-to-pdf=FILE)."""
    binary = find_chromium()
    if binary is None:
        raise HarnessError(
            "the PDF needs headless Chromium, which is not installed",
            hint="apt-get install -y chromium, or leave pdf out of --format",
        )
    with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
        command = [
            binary,
            *QUIET_FLAGS,
            f"--user-data-dir={profile}",
            *flags,
            page.resolve().as_uri(),
        ]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise HarnessError(
                f"headless Chromium did not finish {page.name} in {TIMEOUT_S} s",
                hint="retry; if it hangs again, print the HTML report from a browser",
            ) from None


def print_pdf(html: Path, pdf: Path) -> None:
    done = run_chromium(html, "--no-pdf-header-footer", f"--print-to-pdf={pdf.resolve()}")
    if done.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
        raise HarnessError(
            f"headless Chromium could not print {html.name} to PDF: {done.stderr.strip()[-300:]}",
            hint="check that `chromium --headless` runs on this machine",
        )
