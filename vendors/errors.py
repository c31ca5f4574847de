"""Vendor-shaped errors, so each official SDK raises the typed error it would raise upstream."""

from __future__ import annotations

import json

from vendors.hosts import Vendor
from vendors.reply import VendorReply

# Anthropic documents these error types per status (docs.anthropic.com/en/api/errors, "HTTP
# errors"), and `invalid_request_error` for any other 4xx; 409 is `conflict_error` (the SDK's
# ErrorType, which anthropic 2.x raises as ConflictError). 504 is `timeout_error` there, a request
# that timed out while being processed (anthropic 2.x: GatewayTimeoutErrorObject's type, raised as
# GatewayTimeoutError). A status missing here takes its class's type (_typed).
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
# OpenAI types a client error `invalid_request_error` (409 too: the SDK's ConflictError) and
# every 5xx `server_error`.
_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    502: "server_error",
    504: "server_error",
}


class VendorRequestError(Exception):
    """A request the vendor would refuse. Raised by validators, turned into an error reply."""

    def __init__(
        self, status: int, message: str, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code  # OpenAI's machine-readable `code` (e.g. "unsupported_value")


def error_reply(
    vendor: Vendor, status: int, message: str, param: str | None = None, code: str | None = None
) -> VendorReply:
    """The error body and status each vendor sends for `status`."""
    body: dict[str, object]
    if vendor == "anthropic":
        body = {
            "type": "error",
            "error": {
                "type": _typed(_ANTHROPIC_TYPES, status, "invalid_request_error", "api_error"),
                "message": message,
            },
        }
    elif vendor == "openai":
        code = code or {404: "unknown_url", 413: "request_too_large"}.get(status)
        body = {
            "error": {
                "message": message,
                "type": _typed(_OPENAI_TYPES, status, "invalid_request_error", "server_error"),
                "param": param,
                "code": code,
            }
        }
    elif vendor == "cohere":
        body = {"message": message}
    else:  # voyage answers FastAPI-style
        body = {"detail": message}
    data = json.dumps(body, separators=(",", ":")).encode()
    return VendorReply(status=status, chunks=[data])


def _typed(types: dict[int, str], status: int, client_error: str, server_error: str) -> str:
    """The vendor's type for `status`: its own, else its class's (a 5xx is never blamed on the
    request, a 4xx never on the vendor)."""
    return types.get(status) or (server_error if status >= 500 else client_error)


def require(body: dict[str, object], *fields: str) -> None:
    """Refuse a request that lacks a required field, naming it as the vendors do."""
    for name in fields:
        if name not in body or body[name] is None:
            raise VendorRequestError(400, f"{name}: Field required", param=name)
