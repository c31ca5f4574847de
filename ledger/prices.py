"""Price tables (versioned TOML files) and the two pricing rules: `cost` and `worst_case`.

All money is `Decimal` USD; rates are USD per million tokens. A price table is read with TOML
floats parsed as `Decimal`, so `0.125` in the file is exactly 0.125 here, and a booked cost equals
a hand-computed figure to the last digit.
"""

from __future__ import annotations

import hashlib
import tomllib
from datetime import date
from decimal import Context, Decimal, localcontext
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ledger.errors import LedgerError, PriceTableError, UnknownModelError

PRICES_SCHEMA = 1
MILLION = Decimal(1_000_000)
# Token counts times rates never come near 50 digits: results stay exact.
_EXACT = Context(prec=50)
DEFAULT_PRICES = "prices.toml"

Rate = Decimal


class UnpricedToolError(LedgerError, LookupError):
    """A server-side tool the price table has no per-use fee for: never priced at 0."""

    def __init__(self, tool: str, table: str) -> None:
        self.tool = tool
        super().__init__(
            f"the price table {table} has no fee for server tool {tool!r}: add it to the "
            "table's [tool_fees] (with its source) or remove the tool from the request"
        )


class Rates(BaseModel):
    """One set of rates: a model's base rates, or those of one long-context tier.

    An omitted cache rate is that level's input rate (no discount, no premium: OpenAI bills cache
    writes as plain input), an omitted reasoning rate is that level's output rate (every vendor
    here bills thinking as output). Input and output must always be given: a forgotten rate must
    not turn into a free one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: Rate = Field(ge=0)
    output: Rate = Field(ge=0)
    cache_write_5m: Rate | None = Field(None, ge=0)
    cache_write_1h: Rate | None = Field(None, ge=0)
    cache_read: Rate | None = Field(None, ge=0)
    reasoning: Rate | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _fill_defaults(self) -> Rates:
        # frozen model: fill through __dict__ so the defaults are visible as plain values.
        for name in ("cache_write_5m", "cache_write_1h", "cache_read"):
            if getattr(self, name) is None:
                self.__dict__[name] = self.input
        if self.reasoning is None:
            self.__dict__["reasoning"] = self.output
        return self

    # The defaults above are always filled, so these accessors never see None.
    @property
    def cw5m(self) -> Decimal:
        return self.cache_write_5m or Decimal(0)

    @property
    def cw1h(self) -> Decimal:
        return self.cache_write_1h or Decimal(0)

    @property
    def cread(self) -> Decimal:
        return self.cache_read or Decimal(0)

    @property
    def reason(self) -> Decimal:
        return self.reasoning or Decimal(0)

    def input_side_max(self) -> Decimal:
        return max(self.input, self.cw5m, self.cw1h, self.cread)

    def output_side_max(self) -> Decimal:
        return max(self.output, self.reason)


class Tier(Rates):
    """Rates that apply to ALL tokens of a call whose prompt is above `above_input_tokens`.

    That is how Anthropic's long-context pricing works (a Sonnet call with more than 200k prompt
    tokens pays the tier rates on every token, output included), not a marginal bracket.
    """

    above_input_tokens: int = Field(gt=0)


class ModelPrice(Rates):
    name: str = ""  # filled from the table key
    vendor: Literal["anthropic", "openai", "cohere", "voyage", "other"]
    max_output_tokens: int = Field(ge=0)
    context_window: int = Field(gt=0)
    tiers: list[Tier] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    notes: str = ""

    @model_validator(mode="after")
    def _check_tiers(self) -> ModelPrice:
        bounds = [t.above_input_tokens for t in self.tiers]
        if bounds != sorted(set(bounds)):
            raise ValueError("tiers must have strictly increasing above_input_tokens")
        return self

    def base_rates(self) -> Rates:
        # A model's price is itself its base rates (a `Rates`, frozen): no copy to build, which
        # every live call's worst case and cost asked for (a validated model each, profiled).
        return self

    def rates_for(self, prompt_tokens: int) -> Rates:
        """The rates a call with this many prompt tokens (input + cache read + writes) pays."""
        chosen: Rates = self.base_rates()
        for tier in self.tiers:
            if prompt_tokens > tier.above_input_tokens:
                chosen = tier
        return chosen

    def levels_up_to(self, prompt_tokens: int) -> list[Rates]:
        """Every rate set a call with at most this many prompt tokens could pay."""
        levels: list[Rates] = [self.base_rates()]
        levels += [t for t in self.tiers if prompt_tokens > t.above_input_tokens]
        return levels


class ToolFee(BaseModel):
    """A per-use fee a vendor bills outside token usage (a web search, a code container).

    `usd_per_use` is USD per ONE use, not per thousand: $10 per 1,000 searches is 0.01. `source`
    must name where the figure was read, so a fee is never a guess without a trail.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    usd_per_use: Decimal = Field(ge=0)
    unit: str = Field(min_length=1)
    source: str = Field(min_length=1)
    notes: str = ""


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal[1] = Field(alias="schema")
    table_version: str = Field(min_length=1)
    checked: date
    check_note: str = ""
    currency: Literal["USD"]
    models: dict[str, ModelPrice]
    # Per-use fees of server-side tools, keyed "<vendor>.<tool>" (e.g. "anthropic.web_search").
    # A table without one cannot price that tool: the live proxy refuses calls that offer it.
    tool_fees: dict[str, ToolFee] = Field(default_factory=dict)
    # Set by load_prices, not read from the file.
    source: str = Field("", exclude=True)
    sha256: str = Field("", exclude=True)

    @model_validator(mode="after")
    def _index(self) -> PriceTable:
        if not self.models:
            raise ValueError("models: the table lists no model")
        seen: dict[str, str] = {}
        for key, price in self.models.items():
            price.__dict__["name"] = key  # frozen model: the key is its name
            for name in (key, *price.aliases):
                if name in seen and seen[name] != key:
                    raise ValueError(
                        f"models.{key}.aliases: {name!r} already names model {seen[name]!r}"
                    )
                seen[name] = key
        self.__dict__["_names"] = seen
        return self

    def model(self, name: str) -> ModelPrice:
        """The prices of a model by its id or an alias (e.g. a dated id)."""
        key = self.__dict__["_names"].get(name)
        if key is None:
            raise UnknownModelError(name, self.source or "(in memory)")
        return self.models[key]

    def names(self) -> list[str]:
        return sorted(self.models)

    def tool_fee(self, name: str) -> Decimal | None:
        """USD per use of a server tool ("anthropic.web_search"); None if the table has none."""
        fee = self.tool_fees.get(name)
        return fee.usd_per_use if fee is not None else None

    def fees(self, uses: dict[str, int]) -> Decimal:
        """The exact USD fees of these tool uses; UnpricedToolError for a tool without a fee."""
        total = Decimal(0)
        for name, count in sorted(uses.items()):
            fee = self.tool_fee(name)
            if fee is None:
                raise UnpricedToolError(name, self.source or "(in memory)")
            total += fee * count
        return total


class TokenCounts(BaseModel):
    """A call's billed tokens, in the split every vendor's usage can be mapped to.

    `input` EXCLUDES cache reads and writes (Anthropic's `input_tokens`; OpenAI's prompt_tokens
    minus cached_tokens). `output` INCLUDES reasoning (both vendors' billed output does);
    `reasoning` only says how much of `output` was thinking, so it is never added twice.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: int = Field(0, ge=0)
    output: int = Field(0, ge=0)
    cache_read: int = Field(0, ge=0)
    cache_write_5m: int = Field(0, ge=0)
    cache_write_1h: int = Field(0, ge=0)
    reasoning: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _reasoning_inside_output(self) -> TokenCounts:
        if self.reasoning > self.output:
            raise ValueError(
                f"reasoning ({self.reasoning}) is part of output ({self.output}) and cannot "
                "exceed it: pass output as the billed total, reasoning included"
            )
        return self

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h


def cost(price: ModelPrice, tokens: TokenCounts) -> Decimal:
    """The exact USD cost of a call: every token at its own rate, the tier set by the prompt."""
    r = price.rates_for(tokens.prompt)
    visible_output = tokens.output - tokens.reasoning
    with localcontext() as ctx:
        ctx.prec = 50  # token counts times rates never come near this: results stay exact
        micro = (
            tokens.input * r.input
            + tokens.cache_read * r.cread
            + tokens.cache_write_5m * r.cw5m
            + tokens.cache_write_1h * r.cw1h
            + visible_output * r.output
            + tokens.reasoning * r.reason
        )
        return micro / MILLION


def worst_case(
    price: ModelPrice, input_tokens_bound: int, max_output_tokens: int | None = None
) -> Decimal:
    """An upper bound on the cost of any call with at most these prompt and output tokens.

    Every prompt token is priced at the highest input-side rate (input, cache writes, cache read)
    of every tier the real prompt could fall in (the bound's tier and all below it, since the real
    prompt may be smaller), every output token at the highest output or reasoning rate of those
    tiers. The tier is chosen by the prompt alone, so no outcome within the bounds costs more.
    """
    if input_tokens_bound < 0:
        raise ValueError(f"input_tokens_bound must be >= 0, got {input_tokens_bound}")
    out = price.max_output_tokens if max_output_tokens is None else max_output_tokens
    if out < 0:
        raise ValueError(f"max_output_tokens must be >= 0, got {out}")
    # The levels of `levels_up_to`, read in one pass (every live call prices its worst case).
    in_rate, out_rate = price.input_side_max(), price.output_side_max()
    for tier in price.tiers:
        if input_tokens_bound > tier.above_input_tokens:
            in_rate = max(in_rate, tier.input_side_max())
            out_rate = max(out_rate, tier.output_side_max())
    exact = _EXACT  # not `localcontext`: every live call asks, and it copies a context each time
    return exact.divide(
        exact.add(exact.multiply(input_tokens_bound, in_rate), exact.multiply(out, out_rate)),
        MILLION,
    )


def _field_of(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(table)"


def parse_prices(data: bytes, source: str) -> PriceTable:
    """Parse and validate a price table's bytes; every problem names `source` and the field."""
    try:
        raw: dict[str, Any] = tomllib.loads(data.decode("utf-8"), parse_float=Decimal)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise PriceTableError(source, "(file)", f"not valid TOML: {e}") from e
    if raw.get("schema") != PRICES_SCHEMA:
        raise PriceTableError(
            source,
            "schema",
            f"is {raw.get('schema')!r}; this harness reads price table schema {PRICES_SCHEMA}",
        )
    try:
        table = PriceTable.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        more = f" (and {e.error_count() - 1} more problems)" if e.error_count() > 1 else ""
        raise PriceTableError(source, _field_of(first["loc"]), first["msg"] + more) from e
    table.source = source
    table.sha256 = hashlib.sha256(data).hexdigest()
    return table


def load_prices(path: Path | None = None) -> PriceTable:
    """Load a price table file, or the packaged default (`ledger/prices.toml`) when None."""
    if path is None:
        ref = resources.files("ledger").joinpath(DEFAULT_PRICES)
        return parse_prices(ref.read_bytes(), f"ledger/{DEFAULT_PRICES} (packaged)")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise PriceTableError(path, "(file)", f"cannot read: {e.strerror or e}") from e
    return parse_prices(data, str(path))
