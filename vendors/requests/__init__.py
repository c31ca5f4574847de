"""What each vendor route accepts: the checks that decide a vendor's 400, word for word, and the
parameters a body is read into. Run by proxy.flow.intake in every mode (`body.check_body`); the
record-mode stubs answer by what they return.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vendors.requests.anthropic_compat import compat_body
    from vendors.requests.anthropic_messages import MessagesPlan, check_messages, plan_messages
    from vendors.requests.body import check_body
    from vendors.requests.embeddings import embedding_inputs, requested_embedding_model
    from vendors.requests.openai_chat import ChatParams, parse_chat
    from vendors.requests.openai_common import EMPTY_OBJECT_SCHEMA, FunctionSpec, max_output_tokens
    from vendors.requests.openai_responses import ResponsesParams, parse_responses
    from vendors.requests.rerank import (
        cohere_document_text,
        required_string,
        rerank_documents,
        top_limit,
    )

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ChatParams": "vendors.requests.openai_chat",
    "EMPTY_OBJECT_SCHEMA": "vendors.requests.openai_common",
    "FunctionSpec": "vendors.requests.openai_common",
    "MessagesPlan": "vendors.requests.anthropic_messages",
    "ResponsesParams": "vendors.requests.openai_responses",
    "check_body": "vendors.requests.body",
    "check_messages": "vendors.requests.anthropic_messages",
    "cohere_document_text": "vendors.requests.rerank",
    "compat_body": "vendors.requests.anthropic_compat",
    "embedding_inputs": "vendors.requests.embeddings",
    "max_output_tokens": "vendors.requests.openai_common",
    "parse_chat": "vendors.requests.openai_chat",
    "parse_responses": "vendors.requests.openai_responses",
    "plan_messages": "vendors.requests.anthropic_messages",
    "requested_embedding_model": "vendors.requests.embeddings",
    "required_string": "vendors.requests.rerank",
    "rerank_documents": "vendors.requests.rerank",
    "top_limit": "vendors.requests.rerank",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "EMPTY_OBJECT_SCHEMA",
    "ChatParams",
    "FunctionSpec",
    "MessagesPlan",
    "ResponsesParams",
    "check_body",
    "check_messages",
    "cohere_document_text",
    "compat_body",
    "embedding_inputs",
    "max_output_tokens",
    "parse_chat",
    "parse_responses",
    "plan_messages",
    "requested_embedding_model",
    "required_string",
    "rerank_documents",
    "top_limit",
]
