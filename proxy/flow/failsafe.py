"""When the proxy itself fails on a call: the arm gets the vendor's own 500 JSON (never
mitmproxy's 502 HTML page, which the SDKs retry, nor a traceback), the call is logged as ours to
fix (`proxy_error`, flagged), and the proxy stays up for the next call. Also the checks of the
harness's own request headers, which no vendor sees.
"""

from __future__ import annotations

import re
import traceback

import structlog
from mitmproxy import http

from proxy.flow.callstate import CallState
from vendors.errors import error_reply
from vendors.reply import VendorReply

log = structlog.get_logger("harness.proxy")

# Flag of a call the proxy itself failed on (outcome proxy_error).
INTERNAL_ERROR_FLAG = "proxy_exception"
# The purpose is a key into the study's pins and delays and a label in every report.
PURPOSE_SHAPE = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def mark_failed(state: CallState, hook: str) -> None:
    """Record on `state` that the proxy failed in `hook`; the traceback goes to the proxy's log
    only. Call from an `except` block."""
    log.error("proxy failed on a call", hook=hook, seq=state.seq, traceback=traceback.format_exc())
    state.outcome = "proxy_error"
    if INTERNAL_ERROR_FLAG not in state.flags:
        state.flags.append(INTERNAL_ERROR_FLAG)
    state.error = f"harness proxy failed in its {hook} hook"


def internal_reply(state: CallState) -> VendorReply:
    return error_reply(
        state.vendor,
        500,
        "The harness proxy failed on this call and did not relay it; its log has the details.",
    )


def as_response(reply: VendorReply) -> http.Response:
    return http.Response.make(reply.status, reply.body, {"content-type": reply.content_type})


def bad_purpose(state: CallState) -> VendorReply | None:
    """The 400 for an X-Harness-Purpose of any other shape (the arm's bug), else None."""
    if not state.purpose or PURPOSE_SHAPE.fullmatch(state.purpose):
        return None
    state.purpose = ""
    state.outcome = "bad_request"
    return error_reply(
        state.vendor,
        400,
        "X-Harness-Purpose must be 1-64 letters, digits, '.', '_', ':' or '-' "
        "(such as main, embedding, guard).",
    )


def safe_text(value: str) -> str:
    """`value` as UTF-8 can hold it: mitmproxy decodes a request line's stray bytes to lone
    surrogates, which no JSON encoder writes."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


# Judges are billed in a ledger stage of their own, so judging never spends the arms' cap while
# every dollar it costs is still booked (docs/judging.md): the purpose and the stage go together.
JUDGE = "judge"


def misbilled_judge(state: CallState, stage: str, live: bool) -> VendorReply | None:
    """Live mode: the 403 for a judge's call (X-Harness-Purpose: judge) to a proxy charging
    another stage, and for any other call to a proxy charging the `judge` stage; else None."""
    if not live or (state.purpose == JUDGE) == (stage == JUDGE):
        return None
    state.outcome = "refused"
    if state.purpose == JUDGE:
        why = f"a judge's call is charged to the ledger stage 'judge', this proxy charges {stage!r}"
    else:
        why = "this proxy charges the ledger stage 'judge': only calls with purpose judge"
    return error_reply(state.vendor, 403, f"{why} (see docs/judging.md)")
