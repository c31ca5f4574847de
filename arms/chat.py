"""One streamed chat call over the official SDKs, shared by the reference arms.

The SDKs find the proxy by themselves: OPENAI_BASE_URL / OPENAI_API_KEY and ANTHROPIC_BASE_URL /
ANTHROPIC_API_KEY come from the environment the harness gives the arm, so an arm never holds a
real key or a vendor address. Every call carries `X-Harness-Purpose`, so the proxy attributes it
without guessing from the route.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import openai

from arms.seam import EngineParity

if TYPE_CHECKING:
    # Imported when first used: the anthropic SDK takes seconds to import, and an arm's
    # start-to-healthy time is measured (bench/), so an OpenAI subject should not pay for it.
    import anthropic

PURPOSE_HEADER = "X-Harness-Purpose"
DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-haiku-4-5-20251001"}
Vendor = Literal["openai", "anthropic"]
# How an Anthropic subject is reached: "messages", the Messages API (anthropic SDK); "compat",
# Anthropic's OpenAI-compatible route (`POST /anthropic/v1/chat/completions`, openai SDK).
AnthropicRoute = Literal["messages", "compat"]
# Set by the harness from the day's probe (probe.json, `harness probe`;
# harness/run/control/probe_route.py) for every arm when a decision exists: an arm that reaches
# Anthropic over the compatibility route reads it and falls back to the Messages API when it says
# "messages".
PROBE_ROUTE_ENV = "HARNESS_PROBE_ROUTE"


def probe_route(default: AnthropicRoute = "compat") -> AnthropicRoute:
    """The route the day's probe chose ($HARNESS_PROBE_ROUTE), `default` when there is none."""
    value = os.environ.get(PROBE_ROUTE_ENV, "").strip()
    if not value:
        return default
    if value not in ("messages", "compat"):
        raise ValueError(f"{PROBE_ROUTE_ENV}={value!r}: use 'compat' or 'messages'")
    return "compat" if value == "compat" else "messages"


@dataclass(frozen=True)
class ChatConfig:
    vendor: Vendor
    model: str
    max_tokens: int
    anthropic_route: AnthropicRoute = "messages"

    @classmethod
    def from_env(cls) -> ChatConfig:
        """ARM_VENDOR (openai | anthropic), ARM_MODEL, ARM_MAX_TOKENS.

        A model whose name starts with "claude" implies anthropic, so a study can name only the
        model. A bounded max_tokens lets live mode reserve a realistic worst case per call.
        """
        model = os.environ.get("ARM_MODEL", "").strip()
        vendor = os.environ.get("ARM_VENDOR", "").strip().lower()
        if not vendor:
            vendor = "anthropic" if model.startswith("claude") else "openai"
        if vendor not in DEFAULT_MODELS:
            raise ValueError(f"ARM_VENDOR={vendor!r}: use 'openai' or 'anthropic'")
        chosen: Vendor = "anthropic" if vendor == "anthropic" else "openai"
        return cls(
            vendor=chosen,
            model=model or DEFAULT_MODELS[chosen],
            max_tokens=int(os.environ.get("ARM_MAX_TOKENS", "1024")),
        )

    def under(self, parity: EngineParity | None) -> ChatConfig:
        """This config with a study's engine parity laid over it (the answer model and its
        output limit, handed over the seam: arms/seam.py EngineParity)."""
        if parity is None:
            return self
        model = parity.answer_model or self.model
        vendor: Vendor = self.vendor
        if parity.answer_model:
            vendor = "anthropic" if model.startswith("claude") else "openai"
        return replace(
            self, vendor=vendor, model=model, max_tokens=parity.answer_max_tokens or self.max_tokens
        )


DEFAULT_ANSWER_PROMPT = "You are a helpful assistant in a long-running conversation."


def system_prompt(
    clock: datetime, context: str | None, extra: str = "", prompt: str | None = None
) -> str:
    """The answer's system text: `prompt` (a study's `[parity] answer_prompt`, else the
    default), the pinned date, the item's context and `extra` (recalled memories)."""
    # The date comes from the seam's pinned clock, never the container's: two runs of one
    # script must send byte-identical requests for the determinism gate.
    parts = [
        prompt or DEFAULT_ANSWER_PROMPT,
        f"Today's date is {clock.strftime('%A, %d %B %Y')}.",
    ]
    if context:
        parts.append(f"Background for this conversation:\n{context}")
    if extra:
        parts.append(extra)
    return "\n\n".join(parts)


def with_turn_context(system: str, handed: str) -> str:
    """A system text with another arm's turn context placed after it, as a system prompt of the
    turn (docs/coupled.md: never in the user message). `handed` is `Turn.system_addon()`: ""
    when nothing was handed, and then the system text is unchanged."""
    return f"{system}\n\n{handed}" if handed else system


class Chat:
    """A streamed chat call to whichever vendor the config names."""

    def __init__(self, config: ChatConfig) -> None:
        self.config = config
        self._openai: openai.AsyncOpenAI | None = None
        self._anthropic: anthropic.AsyncAnthropic | None = None
        # The subject's client is made now, at start-up, so the first turn's latency does not
        # include importing an SDK; a missing key also fails here, before the arm is healthy.
        self._compat: openai.AsyncOpenAI | None = None
        if config.vendor == "anthropic" and config.anthropic_route == "compat":
            self.compat_client()
        elif config.vendor == "anthropic":
            self.anthropic_client()
        else:
            self.openai_client()

    def openai_client(self) -> openai.AsyncOpenAI:
        # The other vendor's client (embeddings for an Anthropic subject) is made on first use:
        # an arm that never embeds needs no OpenAI key.
        if self._openai is None:
            self._openai = openai.AsyncOpenAI()
        return self._openai

    def compat_client(self) -> openai.AsyncOpenAI:
        """The openai SDK on Anthropic's OpenAI-compatible route: base URL the Anthropic one
        (the proxy's /anthropic) plus /v1, Anthropic's key (a placeholder the proxy replaces)."""
        if self._compat is None:
            base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
            self._compat = openai.AsyncOpenAI(
                base_url=f"{base}/v1", api_key=os.environ.get("ANTHROPIC_API_KEY")
            )
        return self._compat

    def anthropic_client(self) -> anthropic.AsyncAnthropic:
        if self._anthropic is None:
            import anthropic

            self._anthropic = anthropic.AsyncAnthropic()
        return self._anthropic

    async def stream(
        self,
        system: str,
        messages: list[dict[str, str]],
        purpose: str = "main",
        parity: EngineParity | None = None,
    ) -> AsyncIterator[str]:
        """Yield the reply's text deltas. `messages` alternate user/assistant, newest last.
        `parity`: the session's engine parity (its answer model and output limit)."""
        headers = {PURPOSE_HEADER: purpose}
        config = self.config.under(parity)
        compat = config.anthropic_route == "compat"
        if config.vendor == "anthropic" and not compat:
            async for text in self._anthropic_stream(config, system, messages, headers):
                yield text
            return
        client = self.compat_client() if config.vendor == "anthropic" else self.openai_client()
        openai_messages: list[Any] = [{"role": "system", "content": system}, *messages]
        stream = await client.chat.completions.create(
            model=config.model,
            messages=openai_messages,
            max_completion_tokens=config.max_tokens,
            stream=True,
            extra_headers=headers,
        )
        async with stream:
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content

    async def _anthropic_stream(
        self,
        config: ChatConfig,
        system: str,
        messages: list[dict[str, str]],
        headers: dict[str, str],
    ) -> AsyncIterator[str]:
        # The Messages API wants the conversation to open with a user message; a window cut
        # can leave an assistant message first, which carries no question of its own.
        while messages and messages[0]["role"] != "user":
            messages = messages[1:]
        anthropic_messages: list[Any] = messages
        async with self.anthropic_client().messages.stream(
            model=config.model,
            max_tokens=config.max_tokens,
            system=system,
            messages=anthropic_messages,
            extra_headers=headers,
        ) as stream:
            async for text in stream.text_stream:
                yield text

    async def embed(self, texts: list[str], model: str) -> list[list[float]]:
        """Embeddings always go over the OpenAI API: Anthropic has no embeddings endpoint."""
        response = await self.openai_client().embeddings.create(
            model=model, input=texts, extra_headers={PURPOSE_HEADER: "embedding"}
        )
        return [item.embedding for item in sorted(response.data, key=lambda d: d.index)]

    async def aclose(self) -> None:
        if self._openai is not None:
            await self._openai.close()
        if self._compat is not None:
            await self._compat.close()
        if self._anthropic is not None:
            await self._anthropic.close()
