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

from stubs.openai import chat_completions
from stubs.request import StubRequest
from stubs.rules import StubContext
from vendors.reply import VendorReply
from vendors.requests import compat_body

# Thinking tokens per effort step, as the Messages stub scales its own (low .. max).
_EFFORT_SCALE = {"low": 2, "medium": 4, "high": 6, "xhigh": 8, "max": 10}


def compat_chat(req: StubRequest, ctx: StubContext) -> VendorReply:
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
