"""`GET /v1/models` for each vendor: the models a study may name, in each vendor's list shape."""

from __future__ import annotations

import json

from stubs.request import StubRequest
from stubs.rules import StubContext
from vendors.reply import VendorReply

# A fixed epoch keeps the lists byte-identical across runs (2025-01-01T00:00:00Z).
_CREATED = 1735689600

# Current models only: the anthropic SDK warns on deprecated ids (anthropic/_data).
ANTHROPIC_MODELS = [
    ("claude-opus-4-8", "Claude Opus 4.8"),
    ("claude-opus-4-7", "Claude Opus 4.7"),
    ("claude-opus-4-6", "Claude Opus 4.6"),
    ("claude-sonnet-4-6", "Claude Sonnet 4.6"),
    ("claude-haiku-4-5-20251001", "Claude Haiku 4.5"),
]
OPENAI_MODELS = [
    "gpt-5",
    "gpt-5-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "text-embedding-3-small",
    "text-embedding-3-large",
]


def anthropic_models(req: StubRequest, ctx: StubContext) -> VendorReply:
    data = [
        {
            "type": "model",
            "id": model_id,
            "display_name": name,
            "created_at": "2025-01-01T00:00:00Z",
        }
        for model_id, name in ANTHROPIC_MODELS
    ]
    body = {
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"],
        "last_id": data[-1]["id"],
    }
    return VendorReply(status=200, chunks=[json.dumps(body, separators=(",", ":")).encode()])


def openai_models(req: StubRequest, ctx: StubContext) -> VendorReply:
    body = {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": _CREATED, "owned_by": "system"}
            for m in OPENAI_MODELS
        ],
    }
    return VendorReply(status=200, chunks=[json.dumps(body, separators=(",", ":")).encode()])
