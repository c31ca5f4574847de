"""The checks every call passes before either mode handles it: size, JSON, route, hashes.

A request the vendor would refuse for its shape is answered here with the vendor's error in
both modes: forwarding it in live mode would only pay for the same error. Hostile JSON (too deep,
huge numbers, lone surrogates, duplicate keys: proxy.flow.safe_json) and fields of the wrong type or
value (vendors.requests) are refused before anything else reads the body, so the hash, the metering
and the stubs only ever see a body of sane shape. So is a top-level field the vendor does not
accept (vendors.fields), with that vendor's own refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from proxy.flow.callstate import CallState
from proxy.flow.safe_json import HostileJSON, parse_body
from rundir.calls import BodyStore, hash_masked, mask_body, request_hash
from vendors.errors import VendorRequestError, error_reply
from vendors.fields import unknown_field
from vendors.hosts import default_purpose
from vendors.reply import VendorReply
from vendors.routes import find_route

# Raises VendorRequestError (the vendor's 400) for a body route NAME refuses.
BodyCheck = Callable[[str, dict[str, Any]], None]

# Bodies the proxy reads as sent: it meters and hashes what the vendor will read, so it never
# guesses at a compressed body (the SDKs send requests uncompressed).
IDENTITY_ENCODINGS = ("", "identity")

# Streamed and plain calls of one request get the same stub reply, so the stub's choice ignores
# these fields (the request hash keeps them).
STREAM_FIELDS = ("stream", "stream_options")


def intake(
    state: CallState,
    raw: bytes,
    masks: Sequence[str],
    body_limit: int,
    bodies: BodyStore | None,
    content_encoding: str = "",
    keep_later: bool = False,
    check: BodyCheck | None = None,
) -> VendorReply | None:
    """Fill `state` from the request; return the vendor's error reply if it must be refused.

    With `keep_later`, a request that passes every check is hashed and its body stored by
    `keep_request` (the caller runs it, once the call has gone out); otherwise here. `check`
    raises VendorRequestError for a body the route's vendor refuses (the app passes the request
    checks, vendors/requests/body.py, so this module loads none of them).
    Raises OSError if the request body cannot be stored (the caller fails closed).
    """
    state.raw = raw
    state.route = find_route(state.vendor, state.method, state.path)
    state.purpose = state.purpose or default_purpose(state.route_name)
    if len(raw) > body_limit:
        state.request_hash = request_hash(state.method, state.route_name, None, raw, ())
        state.outcome = "bad_request"
        return error_reply(
            state.vendor, 413, f"Request body is {len(raw)} bytes; the limit is {body_limit}."
        )
    encoding = content_encoding.strip().lower()
    if encoding not in IDENTITY_ENCODINGS:
        state.outcome = "bad_request"
        keep_request(state, None, masks, bodies)
        return error_reply(
            state.vendor,
            400,
            f"Content-Encoding {content_encoding[:40]!r} is not accepted by the harness proxy; "
            "send the request body uncompressed.",
        )
    body: Any = None
    if raw:
        try:
            body = parse_body(raw)
        except HostileJSON as e:
            state.outcome = "bad_request"
            keep_request(state, None, masks, bodies)
            return error_reply(state.vendor, 400, str(e))
    elif state.method == "GET":
        body = {}
    refusal = _refusal(state, body, check)
    if refusal is not None or not keep_later:
        keep_request(state, body, masks, bodies)
    else:
        state.unkept = True  # `body` is `state.body` now
    return refusal


def _refusal(state: CallState, body: Any, check: BodyCheck | None) -> VendorReply | None:
    if isinstance(body, dict):
        state.body = body  # the call log names the model even of a refused request (a 404 too)
    if state.route is None:
        state.outcome = "bad_request"
        return error_reply(
            state.vendor, 404, f"Unknown route {state.method} {state.path} for {state.vendor}."
        )
    if not isinstance(body, dict):
        state.outcome = "bad_request"
        return error_reply(state.vendor, 400, "The request body must be a JSON object.")
    unknown = unknown_field(state.route.name, body)
    if unknown is not None:
        state.outcome = "bad_request"
        return error_reply(
            state.vendor, unknown.status, unknown.message, unknown.param, unknown.code
        )
    try:
        if check is not None:
            check(state.route.name, body)
    except VendorRequestError as e:
        state.outcome = "bad_request"
        return error_reply(state.vendor, e.status, e.message, e.param, e.code)
    return None


def keep_request(
    state: CallState, body: Any, masks: Sequence[str], bodies: BodyStore | None
) -> None:
    """The request's hash (of its masked JSON, else of its bytes) and its stored body.

    The hash is set first: it cannot fail. Raises OSError if the body cannot be stored."""
    state.unkept = False
    if body is not None:
        state.masked_body = mask_body(body, masks)
        state.request_hash = hash_masked(state.method, state.route_name, state.masked_body)
    else:
        state.request_hash = request_hash(state.method, state.route_name, None, state.raw, ())
    if bodies is not None and state.raw:
        state.request_body = bodies.put(state.raw)


def stub_digest(state: CallState) -> bytes:
    """The stub's source of variation: the masked request without its stream fields."""
    masked = state.masked_body
    if isinstance(masked, dict):
        masked = {k: v for k, v in masked.items() if k not in STREAM_FIELDS}
    return bytes.fromhex(hash_masked(state.method, state.route_name, masked))
