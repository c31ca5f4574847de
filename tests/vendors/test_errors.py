"""Vendor-shaped errors (vendors/errors.py) read by the official SDKs: each status raises the SDK's
documented exception class, with the `type` the vendor documents for that status, or for its
class (any other 4xx a client error, any other 5xx a server error)."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest

from vendors.errors import error_reply
from vendors.hosts import Vendor

HAIKU = "claude-haiku-4-5-20251001"
USER: Any = [{"role": "user", "content": "hi"}]


def _answering(vendor: Vendor, status: int) -> httpx2.Client:
    """An HTTP client whose every request gets error_reply(vendor, status) back."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        reply = error_reply(vendor, status, f"status {status} on purpose")
        return httpx2.Response(
            reply.status, headers={"content-type": reply.content_type}, content=reply.body
        )

    return httpx2.Client(transport=httpx2.MockTransport(answer))


CASES: list[tuple[Vendor, int, type[Exception], str]] = [
    ("anthropic", 400, anthropic.BadRequestError, "invalid_request_error"),
    ("anthropic", 404, anthropic.NotFoundError, "not_found_error"),
    ("anthropic", 409, anthropic.ConflictError, "conflict_error"),  # was api_error: a server fault
    ("anthropic", 422, anthropic.UnprocessableEntityError, "invalid_request_error"),  # other 4xx
    ("anthropic", 429, anthropic.RateLimitError, "rate_limit_error"),
    ("anthropic", 500, anthropic.InternalServerError, "api_error"),
    ("anthropic", 502, anthropic.InternalServerError, "api_error"),
    ("anthropic", 503, anthropic.ServiceUnavailableError, "api_error"),
    ("anthropic", 504, anthropic.GatewayTimeoutError, "timeout_error"),  # was api_error
    ("anthropic", 529, anthropic.OverloadedError, "overloaded_error"),
    ("openai", 400, openai.BadRequestError, "invalid_request_error"),
    ("openai", 409, openai.ConflictError, "invalid_request_error"),
    ("openai", 422, openai.UnprocessableEntityError, "invalid_request_error"),
    ("openai", 429, openai.RateLimitError, "rate_limit_error"),
    ("openai", 500, openai.InternalServerError, "server_error"),
    ("openai", 503, openai.InternalServerError, "server_error"),  # was invalid_request_error
]


def _send(vendor: Vendor, status: int) -> None:
    """One call with the vendor's SDK, no retries, through a client answering `status`."""
    http = _answering(vendor, status)
    if vendor == "anthropic":
        with anthropic.Anthropic(api_key="x", base_url="http://stub", http_client=http) as ant:
            ant.with_options(max_retries=0).messages.create(
                model=HAIKU, max_tokens=8, messages=USER
            )
    else:
        with openai.OpenAI(api_key="x", base_url="http://stub/v1", http_client=http) as oai:
            oai.with_options(max_retries=0).chat.completions.create(model="gpt-4.1", messages=USER)


@pytest.mark.parametrize(("vendor", "status", "raised", "kind"), CASES)
def test_each_sdk_raises_its_class_with_the_documented_type(
    vendor: Vendor, status: int, raised: type[Exception], kind: str
) -> None:
    with pytest.raises(raised) as caught:
        _send(vendor, status)
    error: Any = caught.value
    assert type(error) is raised  # not a subclass an error code would pick
    assert error.status_code == status
    assert error.type == kind
    assert "on purpose" in error.message
