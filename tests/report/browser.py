"""Headless Chromium for the report tests: open a page, keep its net log and a screenshot.

Without Chromium these tests skip; under CI (CI=true) they fail instead, because .ci/run
installs it and a silent skip there would hide that the page was never opened.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.report.formats.chromium import find_chromium, run_chromium


@pytest.fixture(scope="session")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        message = "headless Chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {message}", pytrace=False)
        pytest.skip(message)
    return found


def open_page(page: Path, folder: Path, name: str) -> list[str]:
    """Open `page`, save `<name>.png` in `folder`, return the URLs the PAGE asked for.

    Chromium's own services (update checks, time, accounts) also appear in a net log; a request
    the page made is the one whose network isolation key is the page's origin (file://)."""
    net_log = folder / f"{name}.netlog.json"
    done = run_chromium(
        page,
        f"--log-net-log={net_log}",
        f"--screenshot={folder / f'{name}.png'}",
        "--window-size=1200,2400",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(net_log.read_text())
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    return [
        str(e["params"]["url"])
        for e in log["events"]
        if names.get(e["type"]) == "URL_REQUEST_START_JOB"
        and "url" in e.get("params", {})
        and str(e["params"].get("network_isolation_key", "")).startswith("file://")
    ]


class Hits:
    """A local HTTP server that counts what it was asked for (the page's would-be requests)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        hits = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.paths.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def hits() -> Iterator[Hits]:
    server = Hits()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
