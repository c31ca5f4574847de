"""POST /v1/chat/completions on Anthropic (`/anthropic/v1/chat/completions` through the proxy):
Anthropic's OpenAI SDK compatibility layer, in record mode.

What the layer does, from Anthropic's page "OpenAI SDK compatibility"
(https://platform.claude.com/docs/en/cli-sdks-libraries/libraries/openai-sdk, read 2026-12):
- requests and replies are OpenAI chat completions (the official openai SDK is the client);
- system and developer messages, wherever they stand, are hoisted and joined with a single
  newline ("\\n") into one system prompt at the start (Claude takes one initial system message);
- prompt caching is not supported: cached token counts are always 0;
- `thinking` (sent with the SDK's extra_body) turns on extended thinking; the thinking is billed
  but its text is not returned through the OpenAI shape;
- `n` must be exactly 1; `temperature` takes 0..1 and values above 1 are capped at 1;
- most fields it does not support are ignored silently rather than refused (logprobs,
  response_format, metadata, prediction, presence/frequency penalties, seed, service_tier, ...).
The page does not list `output_config.effort`; Anthropic's own Messages field is passed through
and checked as the Messages API checks it, and `harness probe` tests on the day whether the live
layer honours both `thinking` and `output_config.effort` (a refused bad value proves it reads
the field). `reasoning_effort` is not among the fields the page lists as read, so it is ignored.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stubs.anthropic.request import _check_output_config_format, _check_thinking
from stubs.openai.chat import chat_completions, check_chat
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from vendors.errors import StubRequestError
from vendors.reply import StubReply

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
# Thinking tokens per effort step, as the Messages stub scales its own (low .. max).
_EFFORT_SCALE = {"low": 2, "medium": 4, "high": 6, "xhigh": 8, "max": 10}


def compat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI chat body the layer answers: checked, ignored fields dropped, system and
    developer messages joined into one leading system message, temperature capped at 1."""
    n = body.get("n")
    if n is not None and n != 1:
        raise StubRequestError(400, "n: Only n=1 is supported", "n")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    _check_thinking(body, max_tokens if isinstance(max_tokens, int) else None)
    _check_output_config_format(body)
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
    """The checks stubs.checks runs in every mode: the layer's own, then the chat route's."""
    check_chat(compat_body(body))


def compat_chat(req: StubRequest, ctx: StubContext) -> StubReply:
    body = compat_body(req.body)
    thinking = req.body.get("thinking")
    config = req.body.get("output_config")
    effort = config.get("effort") if isinstance(config, dict) else None

    def think(vreq: StubRequest) -> int:
        if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive"):
            return 0
        spent = _EFFORT_SCALE.get(effort or "high", 6) * (16 + vreq.pick("thinking", 48))
        budget = thinking.get("budget_tokens")
        return min(spent, budget) if isinstance(budget, int) else spent

    return chat_completions(replace(req, body=body), ctx, think)
