"""Inputs whose billed tokens the request's bytes do not bound (wire-formats.md, trap 10).

A 300-byte request can bill 200,000 input tokens: a PDF or an image referenced by URL or by file
id, an inline PDF (billed per page, as text and as an image, however well it compresses), audio,
a stored conversation (`previous_response_id`), or content a server-side tool brings in. Live
mode reserves such a call at the model's full input window; `unbounded_inputs` names what made
it so. Inline images are bounded (a vendor resizes every image to a fixed pixel budget), so each
adds a fixed allowance instead.

The body is hostile input: it is walked with an explicit stack (no recursion, so depth cannot
overflow Python's stack), every value of any JSON type is tolerated, and the walk stops after
`MAX_NODES` values, calling the rest unbounded rather than spending the proxy's CPU on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Tokens one inline (base64 / data URL) image can bill. Anthropic caps an image near 1,600 tokens
# (about 1.15 megapixels, https://platform.claude.com/docs/en/build-with-claude/vision) and its
# high-resolution models near 4,800; OpenAI's detail:high tiles bill at most about 1,500 for
# gpt-4.1-class models (https://developers.openai.com/api/docs/guides/images-vision). 6,000 is
# above every published figure.
INLINE_IMAGE_TOKENS = 6000
MAX_NODES = 200_000

# Anthropic `source.type` values that point at bytes the request does not carry.
_REMOTE_SOURCES = frozenset({"url", "file"})
# Top-level fields that pull in stored state the request does not carry.
_STORED_STATE = {
    "previous_response_id": "a stored response (previous_response_id)",
    "conversation": "a stored conversation (conversation)",
    "mcp_servers": "remote MCP servers (mcp_servers)",
    "container": "a code container's files (container)",
}


@dataclass
class InputBound:
    """What a request holds beyond its bytes: reasons it is unbounded, and inline images."""

    unbounded: list[str] = field(default_factory=list)
    inline_images: int = 0

    @property
    def extra_tokens(self) -> int:
        return self.inline_images * INLINE_IMAGE_TOKENS


def _is_http(value: Any) -> bool:
    return isinstance(value, str) and value[:8].lower().startswith(("http://", "https://"))


def _is_data_url(value: Any) -> bool:
    return isinstance(value, str) and value[:5].lower() == "data:"


# Every key `_inspect` reads: an object with none of them (a chat message, most of a tool's
# schema) holds nothing it looks for, so the walk skips it.
_INSPECTED = frozenset(
    {"type", "source", "file_id", "file_url", "file_data", "image_url", "input_audio"}
)


def _inspect(node: dict[str, Any], found: InputBound) -> None:
    """Look at one JSON object of the body for input that its bytes do not bound."""
    kind = node.get("type")
    kind = kind if isinstance(kind, str) else ""  # any JSON type may sit where a name should
    source = node.get("source")
    if isinstance(source, dict):
        source_type = source.get("type")
        source_type = source_type if isinstance(source_type, str) else ""
        if source_type in _REMOTE_SOURCES:
            found.unbounded.append(f"a {kind or 'block'} by {source_type} (source.type)")
        elif kind == "document" and source_type not in ("text", "content"):
            # A PDF is billed per page (text and a page image): its size says nothing.
            found.unbounded.append("an inline PDF document")
        elif kind == "image":
            found.inline_images += 1
    for key in ("file_id", "file_url"):
        if isinstance(node.get(key), str):
            found.unbounded.append(f"a file by {key}")
    if "file_data" in node:
        found.unbounded.append("an inline file (file_data)")
    image_url = node.get("image_url")
    if isinstance(image_url, dict):
        image_url = image_url.get("url")
    if _is_http(image_url):
        found.unbounded.append("an image by URL (image_url)")
    elif _is_data_url(image_url):
        found.inline_images += 1
    if "input_audio" in node or kind == "input_audio":
        # Audio is billed in audio tokens, at rates the price table does not have.
        found.unbounded.append("audio input (input_audio)")


def _empty(value: Any) -> bool:
    """`value in (None, "", [], {})`, without building that list and dict each time."""
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def unbounded_inputs(body: Any) -> InputBound:
    """Every input in `body` that its bytes do not bound, found by a bounded, iterative walk."""
    found = InputBound()
    if isinstance(body, dict):
        for key, why in _STORED_STATE.items():
            if not _empty(body.get(key)):
                found.unbounded.append(why)
        if isinstance(body.get("prompt"), dict):  # Responses: a stored prompt by id
            found.unbounded.append("a stored prompt template (prompt)")
    stack: list[Any] = [body]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            found.unbounded.append(f"a body of more than {MAX_NODES} JSON values (not inspected)")
            break
        if isinstance(node, dict):
            if not _INSPECTED.isdisjoint(node):
                _inspect(node, found)
            values: Any = node.values()
        elif isinstance(node, list):
            values = node
        else:
            continue
        for value in values:
            if isinstance(value, (dict, list)):
                stack.append(value)
    # One reason per kind is enough for a flag or an error message.
    found.unbounded = list(dict.fromkeys(found.unbounded))
    return found
