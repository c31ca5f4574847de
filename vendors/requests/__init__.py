"""What each vendor route accepts: the checks that decide a vendor's 400, word for word, and the
parameters a body is read into. Run by proxy.flow.intake in every mode (`body.check_body`); the
record-mode stubs answer by what they return.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

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
