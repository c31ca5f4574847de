"""The study's pinned sampling (`[pins]` in study.toml, or a pins TOML for the live proxy): the
values every arm's main calls are sent with. The model is shared by the study loader (harness/)
and the proxy's sampling rewrite (proxy/flow/sampling.py, every mode), so neither imports the
other.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

MIN_THINKING_BUDGET = 1024  # the Messages API refuses smaller budgets
DEFAULT_OUTPUT_CAP = 6000
# The call log's flag for a reply whose served model is not the purpose's pinned one.
WRONG_MODEL_FLAG = "wrong_model"

AnthropicEffort = Literal["low", "medium", "high", "xhigh", "max"]
OpenAIEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]


class PinsError(ValueError):
    """A `[pins]` table that does not validate; the message names each bad field."""


class ThinkingDisabled(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["disabled"]


class ThinkingEnabled(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["enabled"]
    budget_tokens: int = Field(ge=MIN_THINKING_BUDGET)


class ThinkingAdaptive(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["adaptive"]


ThinkingPin = ThinkingDisabled | ThinkingEnabled | ThinkingAdaptive


class Pins(BaseModel):
    """The study's pinned sampling values; None means "leave the arm's choice alone"."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    top_k: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=1)
    thinking: ThinkingPin | None = Field(None, discriminator="type")
    effort: AnthropicEffort | None = None
    reasoning_effort: OpenAIEffort | None = None
    seed: int | None = None
    verbosity: Literal["low", "medium", "high"] | None = None
    purposes: list[str] = Field(default_factory=lambda: ["main"])
    # The main calls' output cap where `max_tokens` is not pinned: an arm asking for more (or
    # for no limit) is sent this many; 0 turns the cap off. A default, so every arm's main
    # calls are bounded alike (issue 25's parity) and run.json's pins show it.
    output_cap: int = Field(DEFAULT_OUTPUT_CAP, ge=0)
    # A reference arm (`from_arm = "B"`): the sampling fields of its captured main request of an
    # item and turn are pinned on the other arms' main requests of that turn, over these pins
    # (proxy/flow/arm_pins.py). The study checks it names one of its arms.
    from_arm: str | None = Field(None, min_length=1)
    # Model identity (`[pins.models]`, purpose -> model id): the model each purpose's replies
    # must name as served (OpenAI's `model`, Anthropic's `message.model`). A main call served by
    # another model is its turn's failure (`wrong_model`); another purpose's is a flagged finding.
    models: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _budget_fits(self) -> Pins:
        # Caught at load time so a study with an impossible pin never starts spending.
        if (
            isinstance(self.thinking, ThinkingEnabled)
            and self.max_tokens is not None
            and self.thinking.budget_tokens >= self.max_tokens
        ):
            raise ValueError(
                f"thinking.budget_tokens ({self.thinking.budget_tokens}) must be less than "
                f"max_tokens ({self.max_tokens}): raise max_tokens or lower the budget"
            )
        return self

    def pinned_model(self, purpose: str) -> str | None:
        return self.models.get(purpose)

    @classmethod
    def from_toml_table(cls, table: dict[str, Any]) -> Pins:
        """Pins from a parsed TOML table (e.g. study.toml's `[pins]`), with one line per error."""
        try:
            return cls.model_validate(table)
        except ValidationError as e:
            lines = []
            for err in e.errors():
                where = ".".join(str(p) for p in err["loc"]) or "pins"
                got = f" (got {err['input']!r})" if err["type"] != "missing" else ""
                lines.append(f"pins.{where}: {err['msg']}{got}")
            raise PinsError("invalid [pins] table:\n  " + "\n  ".join(lines)) from None


# A dated snapshot's suffix: Anthropic's "-20251001", OpenAI's "-2025-04-14".
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})")


def served_matches(pinned: str, served: str | None) -> bool:
    """Whether a reply naming `served` was served by the pinned model: the same id, or a dated
    snapshot of a pinned alias ("claude-haiku-4-5" -> "claude-haiku-4-5-20251001"); a reply
    that names no model does not match (fail closed). "gpt-4.1" does not match
    "gpt-4.1-mini-2025-04-14": only a date may follow the pin."""
    if not served:
        return False
    pin = pinned.rsplit("/", 1)[-1]  # "anthropic/claude-..." as the study's subject spells it
    return served == pin or (
        served.startswith(pin) and _SNAPSHOT.fullmatch(served[len(pin) :]) is not None
    )


def load_pins(path: Path) -> Pins:
    """Pins from a TOML file: its `[pins]` table (a study file), or its top level. Raises
    PinsError, OSError or tomllib.TOMLDecodeError."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return Pins.from_toml_table(data.get("pins", data))
