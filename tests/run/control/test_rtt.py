"""Round-trip probes (harness/run/control/rtt.py) and what the report does with them and with
strays: a real record run of a real seam arm under local isolation, a real stray, and synthetic runs
for the placements a real arm would take minutes to produce (teardown, start-up)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.run.control.rtt import probe_seam, probe_upstream
from rundir.network.rtt import read_probes
from rundir.network.strays_seen import StraySeen
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness, header, only_run, read_jsonl, toy_arm, write_study
from tests.run.control.test_proxy_control import no_ca_store
from tests.run.watch.test_stray_halt import hostile_arm


def _report(run_dir: Path, out: Path) -> str:
    # --partial: some of these runs were halted by a stray, which the report marks unfinished.
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--resamples", "50",
        "--partial",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return (out / "report.md").read_text()


def _section(markdown: str, number: int) -> str:
    return markdown.split(f"## {number} ")[1].split(f"## {number + 1} ")[0]


def test_seam_probes_give_a_floor_below_every_turn_and_the_report_subtracts_it(
    tmp_path: Path,
) -> None:
    items = [
        {"id": f"i{n}", "clock": "2024-05-01T10:00:00", "turns": [{"user": "sleep 0.2"}]}
        for n in range(2)
    ]
    study = write_study(tmp_path, {"toy": toy_arm()}, items, deadline_ms=5000)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run_dir = only_run(runs)
    probes = read_probes(run_dir / "rtt.jsonl")
    assert [(p.kind, p.target, p.phase) for p in probes] == [
        ("seam", "toy", "start"),
        ("seam", "toy", "end"),
    ]
    turns = read_jsonl(run_dir / "turns.jsonl")
    fastest_turn = min(t["last_token_s"] for t in turns)
    for probe in probes:
        assert probe.error is None and len(probe.samples_s) == 20 and probe.warmup == 2
        assert probe.min_s is not None and probe.median_s is not None
        assert 0 < probe.min_s <= probe.median_s < fastest_turn
    listed = {f["path"] for f in header(run_dir)["manifest"]["files"]}
    assert "rtt.jsonl" in listed
    latency = _section(_report(run_dir, tmp_path / "out"), 9)
    assert "Seam round trips (probe: GET /health on a warm keep-alive connection" in latency
    assert "toy " in latency and "median of 40" in latency
    assert "| toy | " in latency and " ms | " in latency  # the seam column is filled in
    # The report writes outside the run: the new file is in the manifest, the audit passes.
    audit = harness("audit", str(run_dir))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-3000:]


def test_a_stray_is_placed_in_its_turn_and_its_turn_counted(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    items = [
        {
            "id": "first",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": f"connect-and-wait 127.0.0.1 {port} 0"}, {"user": "echo two"}],
        }
    ]
    study = write_study(tmp_path, {"leaky": hostile_arm()}, items, deadline_ms=20000)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]  # halted at the stray
    run_dir = only_run(runs)
    (seen,) = read_jsonl(run_dir / "strays_seen.jsonl")
    assert (seen["arm"], seen["running_arm"], seen["item"], seen["turn"]) == (
        "leaky",
        "leaky",
        "first",
        0,
    )
    arms = _section(_report(run_dir, tmp_path / "out"), 3)
    assert f"| leaky | 127.0.0.1:{port} | 1 | first turn 0 ×1 |" in arms
    # arm, turns, calls, refused, canary scan, and the one turn that ended stray_connection
    assert "| leaky | 1 | 0 | 1 | not run (no --scan) | 1 |" in arms
    assert accepted == []
    audit = harness("audit", str(run_dir))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-3000:]


def _egress(arm: str, destination: str, at: str, source: str = "guard") -> str:
    return json.dumps({"arm": arm, "destination": destination, "time": at, "source": source})


def test_each_refused_destination_is_placed_in_a_turn_start_up_teardown_or_between(
    tmp_path: Path,
) -> None:
    run = "r-strays"
    turns = [turn(run, arm, "i1", 0) for arm in ("mem0", "bare")]
    run_dir = write_run(tmp_path, run, ["mem0", "bare"], turns, [call(run, 1, "mem0", "i1", 0)])
    posthog, dns = "us.i.posthog.com:443", "api.github.com"
    lines = [_egress("mem0", posthog, f"2026-12-01T00:00:0{n}") for n in range(5)]
    lines.append(_egress("mem0", dns, "2026-12-01T00:00:07", source="dns"))
    (run_dir / "egress.jsonl").write_text("\n".join(lines) + "\n")
    seen = [
        StraySeen(run=run, arm="mem0", destination=posthog, source="guard", time="t0",
                  during="start-up"),
        StraySeen(run=run, arm="mem0", destination=posthog, source="guard", time="t1",
                  during="turn", running_arm="mem0", item="i1", turn=0),
        # Seen while bare's turn ran, before mem0's last turn: between mem0's turns.
        StraySeen(run=run, arm="mem0", destination=posthog, source="guard", time="t2",
                  during="turn", running_arm="bare", item="i1", turn=0),
    ]  # fmt: skip
    (run_dir / "strays_seen.jsonl").write_text(
        "".join(s.model_dump_json(by_alias=True) + "\n" for s in seen)
    )
    head = header(run_dir)
    head["study"]["teardown_strays"] = {"mem0": {posthog: 2, dns: 1}}
    (run_dir / "run.json").write_text(json.dumps(head))
    arms = _section(_report(run_dir, tmp_path / "out"), 3)
    assert (
        f"| mem0 | {posthog} | 5 | start-up ×1; i1 turn 0 ×1; teardown ×2; between its turns ×1 |"
        in arms
    )
    assert f"| mem0 | {dns} | 1 | teardown ×1 |" in arms
    assert "| bare | 1 | 0 | 0 | not run (no --scan) | 0 |" in arms


def test_upstream_probe_times_handshakes_and_names_a_refused_one() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(64)
    port = server.getsockname()[1]
    try:
        probe = asyncio.run(probe_upstream("r", "openai", f"http://127.0.0.1:{port}/v1", "start"))
    finally:
        server.close()
    assert probe.method == "tcp_connect" and probe.error is None
    assert len(probe.samples_s) == 10 and all(s > 0 for s in probe.samples_s)
    closed = asyncio.run(probe_upstream("r", "openai", f"http://127.0.0.1:{port}", "end"))
    assert closed.samples_s == [] and closed.median_s is None
    assert closed.error is not None and "ConnectionRefused" in closed.error


class _Health(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the probe's one connection serves every sample

    def do_GET(self) -> None:
        body = b'{"ok": true}'
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_seam_probe_builds_no_tls_context_and_times_every_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The seam is plain HTTP: the probe's client loads no CA store (~25 ms of CPU, more than
    the round trips it times), and still times its warm-up and samples on one connection."""
    no_ca_store(monkeypatch)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        probe = asyncio.run(probe_seam("r", "toy", url, "start", samples=5, warmup=1))
    finally:
        server.shutdown()
        server.server_close()
    assert probe.error is None and probe.warmup == 1 and len(probe.samples_s) == 5
    assert probe.min_s is not None and probe.min_s > 0


@pytest.mark.parametrize("probed", [True, False])
def test_the_report_uses_upstream_probes_for_their_vendors_routes(
    tmp_path: Path, probed: bool
) -> None:
    from rundir.calls.calllog import Timing
    from rundir.network.rtt import RttProbe

    run = "r-up"
    timing = Timing(start=10.0, first_byte=10.05, end=10.2)
    run_dir = write_run(
        tmp_path, run, ["a"], [turn(run, "a", "i1", 0, last=0.5)],
        [call(run, 1, "a", "i1", 0, timing=timing)],
    )  # fmt: skip
    if probed:
        probe = RttProbe(run=run, kind="upstream", target="openai", phase="start",
                         method="tcp_connect", time="t", samples_s=[0.01, 0.02, 0.03],
                         min_s=0.01, median_s=0.02)  # fmt: skip
        (run_dir / "rtt.jsonl").write_text(probe.model_dump_json(by_alias=True) + "\n")
    latency = _section(_report(run_dir, tmp_path / "out"), 9)
    # records.jsonl: the turn's response size beside its latency (the call's 40 + 60 bytes).
    (row,) = [r for r in read_jsonl(tmp_path / "out" / "records.jsonl") if r["kind"] == "turn"]
    assert row["response_bytes"] == 100
    if probed:
        assert "openai.chat 20.0 ms (probe, 3 handshakes)" in latency
        assert "| a | 0.48 s | 0.48 s | not measured | 100 | 100 |" in latency
    else:
        assert "openai.chat 50.0 ms (run_minimum, 1 calls)" in latency
        assert "| a | 0.45 s | 0.45 s | not measured | 100 | 100 |" in latency
        assert "Seam round trips: not measured" in latency


def test_a_live_run_probes_its_vendor_and_the_report_uses_it(tmp_path: Path) -> None:
    from tests.fakevendor.server import FakeVendor
    from tests.helpers.gate_studies import gate_study
    from tests.helpers.studies import gate_then_live
    from tests.proxy.live_helpers import STUDY_KEYS

    with FakeVendor() as vendor:
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
        run_dir = gate_then_live(study, tmp_path / "runs", STUDY_KEYS)
    probes = read_probes(run_dir / "rtt.jsonl")
    upstream = [p for p in probes if p.kind == "upstream"]
    assert [(p.target, p.phase, p.method) for p in upstream] == [
        ("openai", "start", "tcp_connect"),
        ("openai", "end", "tcp_connect"),
    ]
    assert all(p.error is None and len(p.samples_s) == 10 for p in upstream)
    # The record runs of the gate reached no vendor: they probe their seams only.
    for record in (p for p in (tmp_path / "runs").iterdir() if p != run_dir):
        if (record / "rtt.jsonl").exists():
            assert {p.kind for p in read_probes(record / "rtt.jsonl")} == {"seam"}
    latency = _section(_report(run_dir, tmp_path / "out"), 9)
    assert "openai.chat " in latency and "(probe, 20 handshakes)" in latency
    assert "run_minimum" not in latency
