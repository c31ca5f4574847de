"""proxy.app.arrival: a call is attributed to the arm instance its listener names and to that
instance's turn, the harness's own headers never go on, the output guard's listener makes its
calls the guard's whatever they say, and a call that names no purpose gets an ingestion's or the
study's first matching rule's."""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    # mitmproxy's master imports ldap3, which trips pyasn1's DeprecationWarning (an error here).
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import http
    from mitmproxy.test import tflow, tutils

from proxy.app.arrival import arriving_call, listener_instance, name_purpose
from proxy.flow.control import TurnBoard, TurnRef
from proxy.flow.header_fields import lowered
from rundir.control.proxy_file import PurposeRule
from vendors.routes import find_route

CHAT = "/openai/v1/chat/completions"


def _flow(port: int, headers: dict[str, str]) -> http.HTTPFlow:
    request = tutils.treq(
        method=b"POST",
        host="127.0.0.1",
        port=port,
        path=CHAT.encode(),
        headers=http.Headers([(k.encode(), v.encode()) for k, v in headers.items()]),
        content=b"{}",
    )
    flow = tflow.tflow(req=request)
    flow.client_conn.sockname = ("127.0.0.1", port)
    return flow


def test_a_workers_copy_is_its_arms_call_in_its_own_turn_without_harness_headers() -> None:
    turns = TurnBoard()
    turns.set("mem0@1", TurnRef("item-3", 2))
    turns.set("mem0", TurnRef("item-9", 0))
    flow = _flow(4101, {"X-Harness-Purpose": "main", "X-Harness-Arm": "mem0", "host": "x"})
    state = arriving_call(flow, lowered(flow.request.headers), "mem0@1", 7, turns)
    assert (state.vendor, state.path) == ("openai", "/v1/chat/completions")
    assert (state.arm, state.instance, state.seq) == ("mem0", "mem0@1", 7)
    assert state.turn == TurnRef("item-3", 2)
    assert state.purpose == "main"
    assert "x-harness-purpose" not in flow.request.headers
    assert "x-harness-arm" not in flow.request.headers
    assert flow.request.headers["host"] == "x"


def test_the_listener_names_the_instance_and_an_unknown_one_the_default_arm() -> None:
    ports = {4101: "mem0@1"}
    assert listener_instance(_flow(4101, {}), ports, "default") == "mem0@1"
    assert listener_instance(_flow(4999, {}), ports, "default") == "default"


def test_the_guards_listener_makes_every_call_the_guards() -> None:
    turns = TurnBoard()
    turns.set("a", TurnRef("item-1", 0))
    turns.set_guard("a", TurnRef("item-1", 0, phase="guard"))
    flow = _flow(4101, {"X-Harness-Purpose": "main"})
    state = arriving_call(flow, lowered(flow.request.headers), "a", 1, turns)
    assert state.purpose == "guard"


def test_a_call_naming_no_purpose_gets_the_ingestions_or_the_first_matching_rules() -> None:
    rules = [
        PurposeRule(purpose="summary", route="openai.chat", model="gpt-4.1-nano*"),
        PurposeRule(purpose="other", route="openai.chat"),
    ]
    turns = TurnBoard()
    state = arriving_call(_flow(1, {}), {}, "a", 1, turns)
    state.route = find_route("openai", "POST", "/v1/chat/completions")
    state.body = {"model": "gpt-4.1-nano-2025-04-14"}
    name_purpose(state, rules)
    assert state.purpose == "summary"
    state.purpose, state.body = "", {"model": "gpt-4.1"}
    name_purpose(state, rules)
    assert state.purpose == "other"
    state.purpose = ""
    name_purpose(state, [])
    assert state.purpose == ""
    turns.set("a", TurnRef("item-1", 0, phase="ingest"))
    ingesting = arriving_call(_flow(1, {}), {}, "a", 2, turns)
    name_purpose(ingesting, rules)
    assert ingesting.purpose == "ingest"
