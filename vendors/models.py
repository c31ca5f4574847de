"""Facts about vendors' models that both record mode and live metering need."""

from __future__ import annotations

# Families that reason before answering: OpenAI refuses non-default sampling for them.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
# gpt-5's chat snapshots ("gpt-5-chat-latest") are not reasoning models and take temperature.
_NON_REASONING_MARKERS = ("-chat",)


def is_reasoning_model(model: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1]  # "openai/o3" as routers spell it
    return name.startswith(_REASONING_PREFIXES) and not any(
        m in name for m in _NON_REASONING_MARKERS
    )
