"""proxy.calllog.record: a call's record holds what the arm sent, escaped where mitmproxy decoded
stray bytes to lone surrogates, so it can always be written."""

from __future__ import annotations

from proxy.calllog.record import build_record
from proxy.flow.callstate import CallState


def test_stray_bytes_in_path_purpose_and_model_are_logged_escaped() -> None:
    state = CallState("openai", "/v1/\udcff", "POST", "arm", "main\udcfe", 1.0)
    state.body = {"model": "gpt\udcfd"}
    state.outcome = "bad_request"
    record = build_record(
        state, 404, None, 2.0, run_id="r", mode="record", response_hash=None, ref=None
    )
    line = record.to_line()
    assert "\\\\udcff" in line and "\\\\udcfe" in line and "\\\\udcfd" in line
    assert record.status == 404 and record.outcome == "bad_request"
