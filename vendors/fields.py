"""The top-level body fields each vendor route accepts, and how each vendor refuses any other.

Both vendors validate request bodies strictly: Anthropic answers an unknown field with a 400
`invalid_request_error` "<field>: Extra inputs are not permitted", OpenAI's chat completions and
embeddings with a 400 "Unrecognized request argument supplied: <field>", and its Responses API
with a 400 "Unknown parameter: '<field>'." (code `unknown_parameter`). Cohere's v2 rerank answers
422 "unknown field: parameter '<field>' is not a valid field"; Voyage's rerank 400 "Argument
'<field>' is not supported by our API". A proxy that answered such a request 200 in record mode
would pass a request that fails live, and forwarding it live would only pay for the refusal.

The sets are the installed SDKs' create() parameters (anthropic 2.17 `messages.create`,
`beta.messages.create`, `messages.count_tokens`, `beta.messages.count_tokens`; openai 3.63
`chat.completions.create`, `responses.create`, `embeddings.create`), less the SDK-only ones
(`extra_*`, `timeout`, `betas`, which the anthropic SDK sends as the `anthropic-beta` header),
plus the wire fields the SDKs no longer name but the vendors still take (WIRE_ONLY, each with
why). tests/vendors/test_fields.py holds these sets to the installed SDKs, so an SDK upgrade
that adds a field fails a test rather than the arm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Fields both Anthropic routes take, beta fields included: the vendor reads them when the
# request names the beta in its `anthropic-beta` header, and which betas a request needs is the
# vendor's business (record mode does not second-guess a beta header).
_ANTHROPIC_COMMON = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "cache_control",
        "speed",
        "user_profile_id",
        "workspace_id",
        # beta
        "billing_policy",
        "compaction",
        "context_management",
        "mcp_servers",
    }
)

# Wire fields the installed SDKs' create() no longer lists but the vendors accept: clients
# that build bodies themselves (litellm, LangChain, the AI SDK) still send them.
WIRE_ONLY: dict[str, frozenset[str]] = {
    # Sampling fields: anthropic 2.x dropped them from create(), the API still reads them
    # (vendors.requests.anthropic_messages checks their values); `output_format` is the
    # structured-outputs beta's field (`structured-outputs-2025-11-13`), which litellm sends.
    "anthropic.messages": frozenset({"temperature", "top_p", "top_k", "output_format"}),
    "anthropic.count_tokens": frozenset({"output_format"}),
    # `stream` is a create() argument but not in the params TypedDict the test reads.
    "openai.chat": frozenset({"stream"}),
    "openai.responses": frozenset({"stream"}),
}

# Routes that ignore fields they do not know rather than refuse them: Anthropic's OpenAI
# compatibility layer ("most unsupported fields are silently ignored rather than producing
# errors", its "OpenAI SDK compatibility" page; stubs/anthropic/compat.py).
IGNORES_UNKNOWN = frozenset({"anthropic.chat"})

ACCEPTED: dict[str, frozenset[str]] = {
    "anthropic.messages": _ANTHROPIC_COMMON
    | WIRE_ONLY["anthropic.messages"]
    | {
        "max_tokens",
        "metadata",
        "stop_sequences",
        "stream",
        "service_tier",
        "container",
        "inference_geo",
        "diagnostics",
        # beta
        "fallbacks",
        "fallback_credit_token",
        "thread",
    },
    "anthropic.count_tokens": _ANTHROPIC_COMMON | WIRE_ONLY["anthropic.count_tokens"],
    "openai.chat": WIRE_ONLY["openai.chat"]
    | {
        "model",
        "messages",
        "audio",
        "frequency_penalty",
        "function_call",
        "functions",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "metadata",
        "modalities",
        "moderation",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "seed",
        "service_tier",
        "stop",
        "store",
        "stream_options",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    },
    "openai.responses": WIRE_ONLY["openai.responses"]
    | {
        "model",
        "input",
        "access_programs",
        "background",
        "background_options",
        "context_management",
        "conversation",
        "image",
        "include",
        "instructions",
        "max_output_tokens",
        "max_tool_calls",
        "metadata",
        "moderation",
        "parallel_tool_calls",
        "previous_response_id",
        "prompt",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "store",
        "stream_options",
        "temperature",
        "text",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "truncation",
        "user",
    },
    "openai.embeddings": frozenset({"model", "input", "dimensions", "encoding_format", "user"}),
    # Cohere's v2 rerank reference lists model, query, documents, top_n, max_tokens_per_doc and
    # priority; return_documents, rank_fields and max_chunks_per_doc are v1's, still sent to v2
    # by clients written for v1 and accepted there, so they are not refused here.
    "cohere.rerank": frozenset(
        {
            "model",
            "query",
            "documents",
            "top_n",
            "max_tokens_per_doc",
            "priority",
            "return_documents",
            "rank_fields",
            "max_chunks_per_doc",
        }
    ),
    # The voyageai client's rerank(): query, documents, model, top_k, truncation; and
    # return_documents of the REST API.
    "voyage.rerank": frozenset(
        {"model", "query", "documents", "top_k", "return_documents", "truncation"}
    ),
}


@dataclass(frozen=True)
class UnknownField:
    """How the vendor refuses an unknown field: status, message, and OpenAI's param and code."""

    field: str
    status: int
    message: str
    param: str | None = None
    code: str | None = None


def unknown_field(route: str, body: dict[str, Any]) -> UnknownField | None:
    """The vendor's refusal of the first field of `body` that `route` does not accept, or None
    (also for a route with no list here: a GET, or a route this module does not know)."""
    accepted = ACCEPTED.get(route)
    if accepted is None:
        return None
    if accepted.issuperset(body):
        return None  # the common case, in one pass in C
    field = next(name for name in body if name not in accepted)
    shown = field[:200]  # a hostile name is not echoed whole
    if route.startswith("anthropic."):
        return UnknownField(field, 400, f"{shown}: Extra inputs are not permitted", shown)
    if route == "openai.responses":
        return UnknownField(
            field, 400, f"Unknown parameter: '{shown}'.", shown, "unknown_parameter"
        )
    if route.startswith("openai."):
        return UnknownField(field, 400, f"Unrecognized request argument supplied: {shown}")
    if route == "cohere.rerank":
        return UnknownField(
            field,
            422,
            f"unknown field: parameter '{shown}' is not a valid field. For proper usage, please "
            "refer to https://docs.cohere.com/reference/rerank",
        )
    return UnknownField(
        field,
        400,
        "The request body is not valid JSON, or some arguments were not specified properly. "
        f"In particular, Argument '{shown}' is not supported by our API",
    )
