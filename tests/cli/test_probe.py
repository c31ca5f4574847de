"""`harness probe STUDY` (harness/cli/probe.py): through a live proxy in front of the fake vendor,
whose compat route reads `thinking` and `output_config.effort`, the probe chooses route compat;
against a layer that ignores both it falls back to the Messages API, and `harness report`
prints the fallback as a deviation (section 12)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rundir.network.probe_file import read_probe
from tests.fakevendor.server import FakeVendor
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness
from tests.proxy.live_helpers import start_live_proxy

pytestmark = pytest.mark.integration

SONNET = "claude-sonnet-4-6"


class _Ignoring(BaseHTTPRequestHandler):
    """A compatibility layer that answers every call and reads neither Anthropic field."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        body = json.dumps(
            {
                "id": "chatcmpl-x",
                "object": "chat.completion",
                "created": 0,
                "model": SONNET,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ready"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def ignoring_layer() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ignoring)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _study(tmp_path: Path) -> Path:
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "study.toml").write_text("# the probe reads only the folder\n")
    return folder / "study.toml"


def test_the_live_compat_route_passes_and_is_metered(tmp_path: Path) -> None:
    study = _study(tmp_path)
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path / "proxy", vendor)
        try:
            done = harness(
                "probe", str(study), "--model", SONNET, "--base-url", proxy.anthropic_base
            )
            assert done.returncode == 0, done.stderr
            calls = proxy.calls(at_least=3)
        finally:
            proxy.stop()
    decision = read_probe(study.parent / "probe.json")
    assert decision is not None and decision.route == "compat", decision
    assert [c.name for c in decision.checks] == [
        "valid_call",
        "thinking_honoured",
        "effort_honoured",
    ]
    probes = [c for c in calls if c["route"] == "anthropic.chat"]
    assert len(probes) == 3 and {c["purpose"] for c in probes} == {"probe"}
    assert [c["status"] for c in probes] == [200, 400, 400]
    assert "route: compat" in done.stdout


def test_a_layer_that_ignores_the_fields_falls_back_and_the_report_says_so(
    tmp_path: Path, ignoring_layer: str
) -> None:
    study = _study(tmp_path)
    runs = tmp_path / "runs"
    run_dir = write_run(
        runs,
        "r1",
        ["Z"],
        [turn("r1", "Z", "i1", 1)],
        [call("r1", 1, "Z", "i1", 1)],
        study_path=str(study),
    )
    done = harness(
        "probe", str(study), "--model", SONNET, "--base-url", ignoring_layer, "--run", str(run_dir)
    )
    assert done.returncode == 0, done.stderr
    decision = read_probe(run_dir / "probe.json")
    assert decision is not None and decision.route == "messages"
    assert [c.passed for c in decision.checks] == [True, False, False]
    out = tmp_path / "report"
    report = harness("report", str(run_dir), "--out", str(out))
    assert report.returncode == 0, report.stderr
    markdown = (out / "report.md").read_text()
    section12 = markdown[markdown.index("## 12") :]
    assert "(compatibility probe)" in section12 and "thinking_honoured" in section12
