"""Vendor-shaped errors, so each official SDK raises the typed error it would raise upstream."""

from __future__ import annotations

import json

from stubs.request import StubReply, Vendor

# Anthropic documents these error types per status (docs.anthropic.com, "Errors").
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    504: "api_error",
    529: "overloaded_error",
}
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


class StubRequestError(Exception):
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
) -> StubReply:
    """The error body and status each vendor sends for `status`."""
    body: dict[str, object]
    if vendor == "anthropic":
        body = {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
        }
    elif vendor == "openai":
        code = code or {404: "unknown_url", 413: "request_too_large"}.get(status)
        body = {
            "error": {
                "message": message,
                "type": _OPENAI_TYPES.get(status, "invalid_request_error"),
                "param": param,
                "code": code,
            }
        }
    elif vendor == "cohere":
        body = {"message": message}
    else:  # voyage answers FastAPI-style
        body = {"detail": message}
    data = json.dumps(body, separators=(",", ":")).encode()
    return StubReply(status=status, chunks=[data])


def require(body: dict[str, object], *fields: str) -> None:
    """Refuse a request that lacks a required field, naming it as the vendors do."""
    for name in fields:
        if name not in body or body[name] is None:
            raise StubRequestError(400, f"{name}: Field required", param=name)
