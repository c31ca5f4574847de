"""The checks of Anthropic's OpenAI SDK compatibility layer (POST /v1/chat/completions on
api.anthropic.com): its own refusals, then the chat route's, and the chat body it answers.

What the layer does is told in stubs.anthropic.compat, which answers it in record mode.
"""

from __future__ import annotations

from typing import Any

from vendors.errors import VendorRequestError
from vendors.requests.anthropic_messages import check_output_config_format, check_thinking
from vendors.requests.openai_chat import check_chat

# Fields the layer accepts and drops (the page's "Ignored" rows, and the OpenAI-only fields it
# has no counterpart for): the stub drops them too, so a reply never depends on them.
IGNORED = (
    "logprobs",
    "top_logprobs",
    "response_format",
    "metadata",
    "prediction",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "service_tier",
    "logit_bias",
    "store",
    "user",
    "modalities",
    "audio",
    "reasoning_effort",
    "verbosity",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "web_search_options",
)


# The Anthropic fields the layer reads on top of OpenAI's.
ANTHROPIC_FIELDS = ("thinking", "output_config")


_SYSTEM_ROLES = ("system", "developer")


def compat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI chat body the layer answers: checked, ignored fields dropped, system and
    developer messages joined into one leading system message, temperature capped at 1."""
    n = body.get("n")
    if n is not None and n != 1:
        raise VendorRequestError(400, "n: Only n=1 is supported", "n")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    check_thinking(body, max_tokens if isinstance(max_tokens, int) else None)
    check_output_config_format(body)
    out = {k: v for k, v in body.items() if k not in IGNORED and k not in ANTHROPIC_FIELDS}
    temperature = out.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        out["temperature"] = min(temperature, 1)
    messages = body.get("messages")
    if isinstance(messages, list):
        out["messages"] = hoist_system(messages)
    return out


def hoist_system(messages: list[Any]) -> list[Any]:
    """System and developer messages joined with one newline into a single system message at the
    start; the others keep their order."""
    texts: list[str] = []
    rest: list[Any] = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") in _SYSTEM_ROLES:
            texts.append(_text(message.get("content")))
        else:
            rest.append(message)
    if not texts:
        return rest
    return [{"role": "system", "content": "\n".join(texts)}, *rest]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def check_compat(body: dict[str, Any]) -> None:
    """The checks vendors.requests.body runs in every mode: the layer's own, then chat's."""
    check_chat(compat_body(body))
