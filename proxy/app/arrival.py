"""What a call is when it arrives, before any mode sees it: its vendor and path, the arm instance
its listener names, the turn the orchestrator said that instance is in, and its purpose (the
arm's header, the output guard's listener, an ingestion's, or the study's `[purposes]` rules).

Also the call mitmproxy refused before any hook (proxy.flow.framing): logged as the arm's bad
request with the same attribution."""

from __future__ import annotations

import time

from mitmproxy import http

from proxy.flow import CallState, Refusal, TurnBoard, rewrite, safe_text
from rundir.control import GUARD_PHASE, PurposeRule, arm_of, rule_purpose
from vendors.hosts import default_purpose, split_vendor
from vendors.routes import find_route

PURPOSE_HEADER = "x-harness-purpose"
INGEST_PURPOSE = "ingest"
# Headers an arm sets for the harness; never forwarded, never hashed.
HARNESS_HEADERS = (PURPOSE_HEADER, "x-harness-arm")


def listener_instance(flow: http.HTTPFlow, arm_ports: dict[int, str], default: str) -> str:
    """The arm instance (`A`, or a worker's copy `A@k`) whose listener the call came in on."""
    port = flow.client_conn.sockname[1] if flow.client_conn.sockname else 0
    return arm_ports.get(port, default)


def arriving_call(
    flow: http.HTTPFlow, headers: dict[str, str], instance: str, seq: int, turns: TurnBoard
) -> CallState:
    """The call's state from its request (`headers` lowered); the harness's own headers are
    stripped from the request, so they are never forwarded nor hashed."""
    req = flow.request
    vendor, path = split_vendor(req.path, _host_header(req, headers), headers)
    # The listener names the arm's instance (a worker's copy): its turn is the instance's,
    # the record names the arm, so calls do not depend on how many workers ran.
    state = CallState(
        vendor=vendor,
        path=safe_text(path),  # stray bytes in the request line: hashed and logged escaped
        method=safe_text(req.method),
        arm=arm_of(instance),
        purpose=headers.get(PURPOSE_HEADER, ""),
        start=req.timestamp_end or time.time(),
        seq=seq,
        turn=turns.current(instance),
        instance=instance,
    )
    if state.turn is not None and state.turn.phase == GUARD_PHASE:
        # The study's output guard holds this listener (the harness said so, not a header):
        # whatever purpose the call names, it is the guard's.
        state.purpose = GUARD_PHASE
    if any(name in headers for name in HARNESS_HEADERS):
        rewrite(req.headers, HARNESS_HEADERS, {})
    return state


def name_purpose(state: CallState, rules: list[PurposeRule]) -> None:
    """The purpose of a call that named none, once its body is read: an ingestion's calls are
    the ingestion's (seam v2); otherwise the first of the study's `[purposes]` rules that its
    route and model match, if any."""
    if state.turn is not None and state.turn.phase == "ingest":
        state.purpose = INGEST_PURPOSE
        return
    if not rules:
        return
    model = state.body.get("model") if isinstance(state.body, dict) else None
    named = rule_purpose(rules, state.route_name, model if isinstance(model, str) else None)
    if named is not None:
        state.purpose = named


def framing_refused_call(
    flow: http.HTTPFlow, refusal: Refusal, instance: str, seq: int, turns: TurnBoard
) -> CallState:
    """A request proxy.flow.framing refused before any hook (its vendor's 400 already sent, the
    connection closed, nothing forwarded), as the arm's bad request."""
    req = flow.request
    vendor, path = split_vendor(req.path, req.host_header or "", {})
    state = CallState(
        vendor=vendor,
        path=safe_text(path),
        method=safe_text(req.method),
        arm=arm_of(instance),
        purpose="",
        start=req.timestamp_start or time.time(),
        seq=seq,
        turn=turns.current(instance),
    )
    state.route = find_route(vendor, state.method, state.path)
    state.purpose = default_purpose(state.route_name)
    state.outcome = "bad_request"
    state.error = safe_text(refusal.reason)
    return state


def _host_header(req: http.Request, headers: dict[str, str]) -> str:
    """`req.host_header` read from the headers already lowered (mitmproxy's own lookup walks
    every field again): the authority of an HTTP/2 or HTTP/3 request, else the Host header."""
    if req.data.http_version in (b"HTTP/2.0", b"HTTP/3"):
        return req.authority or headers.get("host", "")
    return headers.get("host", "")
