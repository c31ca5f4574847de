"""OpenAI's streamed chat chunk in its common form, as msgspec structs that admit nothing else.

A chunk of text (`{"id":..,"object":"chat.completion.chunk","created":..,"model":..,
"choices":[{"index":0,"delta":{"content":".."},"logprobs":null,"finish_reason":null}]}`) is
most of a chat stream's events. Decoded into these structs by msgspec's C decoder, its texts and
the fields the meter reads are attributes, not a walk over a dict. Every struct forbids unknown
fields and every field has one type, so a chunk decodes here only if it holds nothing but these
fields: anything more (tool calls, reasoning text, usage, logprobs, an error, a field a newer
API adds) fails the decode, and the caller reads that chunk as a plain dict, as before.
"""

from __future__ import annotations

import msgspec


class ChatDelta(msgspec.Struct, forbid_unknown_fields=True):
    role: str | None = None
    content: str | None = None
    refusal: str | None = None
    # Fields some servers send as null on every text chunk: only null is admitted here (a call
    # or reasoning text in them makes the chunk a dict's business).
    tool_calls: None = None
    function_call: None = None
    audio: None = None
    reasoning_content: None = None


class ChatChoice(msgspec.Struct, forbid_unknown_fields=True):
    index: int  # required: a choice without one is named by its position, a dict's business
    delta: ChatDelta
    logprobs: None = None
    finish_reason: str | None = None


class ChatChunk(msgspec.Struct, forbid_unknown_fields=True):
    choices: list[ChatChoice]
    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    system_fingerprint: str | None = None
    service_tier: str | None = None
    obfuscation: str | None = None
    usage: None = None


decode_chat_chunk = msgspec.json.Decoder(ChatChunk).decode
