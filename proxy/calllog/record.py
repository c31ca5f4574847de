"""One call's `CallRecord`, built from what the addon knew of it (proxy.flow.callstate)."""

from __future__ import annotations

from typing import Literal

from proxy.flow import CallState, TurnRef, safe_text
from rundir.calls import BodyStore, CallRecord, Timing, Tokens


def store_response(state: CallState, bodies: BodyStore | None) -> str | None:
    """Store the call's response body; its hash, or None if there is none to keep. Raises
    OSError if it cannot be stored."""
    reply = state.reply
    response_body = reply.body if reply is not None else state.response_body
    if response_body is None or bodies is None:
        return None
    return bodies.put(response_body)


def build_record(
    state: CallState,
    status: int,
    first_byte: float | None,
    end: float,
    *,
    run_id: str,
    mode: Literal["record", "live", "replay"],
    response_hash: str | None,
    ref: TurnRef | None,
) -> CallRecord:
    """The record of a finished call whose response body `store_response` kept as
    `response_hash`."""
    reply = state.reply
    body = state.body or {}
    tokens = state.tokens or Tokens()
    if reply is not None and reply.status == 200 and state.tokens is None:
        usage = reply.usage
        tokens = Tokens(
            input=usage.input_tokens,
            output=usage.output_tokens,
            cache_read=usage.cache_read_tokens,
            cache_write=usage.cache_write_tokens,
            reasoning=usage.reasoning_tokens,
            source="stub",
        )
    chunks = state.response_chunks
    if reply is not None and reply.stream:
        chunks = [len(c) for c in reply.chunks]
    model = body.get("model")
    return CallRecord(
        run_id=run_id,
        seq=state.seq,
        mode=mode,
        arm=state.arm,
        item=ref.item if ref else None,
        turn=ref.turn if ref else None,
        phase="ingest" if ref and ref.phase == "ingest" else None,
        purpose=safe_text(state.purpose),
        vendor=state.vendor,
        route=safe_text(state.route_name),
        method=safe_text(state.method),
        path=safe_text(state.path),
        model_requested=safe_text(model) if isinstance(model, str) else None,
        model_served=reply.model if reply is not None else state.model_served,
        stream=bool(reply.stream) if reply is not None else state.stream,
        status=status,
        outcome=state.outcome,
        tokens=tokens,
        request_hash=state.request_hash,
        request_body=state.request_body,
        response_hash=response_hash,
        response_content_type=(
            reply.content_type if reply is not None else state.response_content_type
        ),
        response_chunks=chunks,
        timing=Timing(start=state.start, first_byte=first_byte, end=end),
        cost_usd=state.cost,
        reserved_usd=state.reserved,
        flags=state.flags,
        rewrites=state.rewrites,
        error=safe_text(state.error) if state.error is not None else None,
        reuse_of=state.reuse_of,
    )
