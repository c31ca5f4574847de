"""Vendor-shaped errors (stubs/errors.py) read by the official SDKs: each status raises the SDK's
documented exception class, with the `type` the vendor documents for that status, or for its
class (any other 4xx a client error, any other 5xx a server error)."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest

from stubs.errors import error_reply
from stubs.request import Vendor

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


@pytest.mark.parametrize(
    ("status", "raised", "kind"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (409, anthropic.ConflictError, "conflict_error"),  # was api_error: a server fault
        (422, anthropic.UnprocessableEntityError, "invalid_request_error"),  # any other 4xx
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (503, anthropic.ServiceUnavailableError, "api_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
def test_anthropic_raises_its_class_with_the_documented_type(
    status: int, raised: type[anthropic.APIStatusError], kind: str
) -> None:
    client = anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=_answering("anthropic", status)
    )
    with pytest.raises(raised) as caught:
        client.with_options(max_retries=0).messages.create(model=HAIKU, max_tokens=8, messages=USER)
    assert type(caught.value) is raised  # not a subclass picked by an error code
    assert caught.value.status_code == status
    assert caught.value.type == kind
    assert caught.value.api_message == f"status {status} on purpose"
    client.close()


@pytest.mark.parametrize(
    ("status", "raised", "kind"),
    [
        (400, openai.BadRequestError, "invalid_request_error"),
        (409, openai.ConflictError, "invalid_request_error"),
        (422, openai.UnprocessableEntityError, "invalid_request_error"),
        (429, openai.RateLimitError, "rate_limit_error"),
        (500, openai.InternalServerError, "server_error"),
        (503, openai.InternalServerError, "server_error"),  # was invalid_request_error
    ],
)
def test_openai_raises_its_class_with_the_documented_type(
    status: int, raised: type[openai.APIStatusError], kind: str
) -> None:
    client = openai.OpenAI(
        api_key="x", base_url="http://stub/v1", http_client=_answering("openai", status)
    )
    with pytest.raises(raised) as caught:
        client.with_options(max_retries=0).chat.completions.create(model="gpt-4.1", messages=USER)
    assert type(caught.value) is raised
    assert caught.value.status_code == status
    assert caught.value.type == kind
    client.close()
