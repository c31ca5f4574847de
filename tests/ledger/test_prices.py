"""Price tables: exact costs for hand-computed calls, refusal of unknown models, bad fields named,
and the worst case never under any outcome's real cost."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.errors import PriceTableError, UnknownModelError
from ledger.prices import ModelPrice, TokenCounts, cost, load_prices, parse_prices, worst_case

TABLE = load_prices()

REQUIRED_MODELS = [
    "claude-haiku-4-5-20251001",
    "claude-haiku-4-5",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-4-1",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-5",
    "gpt-5-mini",
    "text-embedding-3-small",
    "text-embedding-3-large",
]

HEADER = """
schema = 1
table_version = "t1"
checked = 2026-11-30
currency = "USD"
"""

# A model whose reasoning rate differs from its output rate, and whose tier makes some rates
# cheaper, so "the highest rate of every level" matters in the worst case.
ODD = (
    HEADER
    + """
[models.odd]
vendor = "other"
input = 2
output = 10
reasoning = 20
cache_write_5m = 2.5
cache_write_1h = 4
cache_read = 0.2
max_output_tokens = 1000
context_window = 500000

[[models.odd.tiers]]
above_input_tokens = 1000
input = 3
output = 8
reasoning = 9
cache_write_5m = 1
cache_write_1h = 1
cache_read = 0.1
"""
)


def price(name: str) -> ModelPrice:
    return TABLE.model(name)


def test_the_packaged_table_lists_every_required_model_with_its_published_price() -> None:
    for name in REQUIRED_MODELS:
        assert price(name).input > 0
    assert price("claude-haiku-4-5-20251001") is price("claude-haiku-4-5")
    assert (price("claude-haiku-4-5").input, price("claude-haiku-4-5").output) == (1, 5)
    assert (price("claude-sonnet-4-6").input, price("claude-sonnet-4-6").output) == (3, 15)
    assert price("claude-sonnet-4-5").tiers[0].output == Decimal("22.50")
    assert (price("claude-opus-4-7").input, price("claude-opus-4-7").output) == (5, 25)
    assert (price("claude-opus-4-1").input, price("claude-opus-4-1").output) == (15, 75)
    assert price("gpt-5-mini").cache_read == Decimal("0.025")
    assert price("text-embedding-3-large").input == Decimal("0.13")
    assert TABLE.currency == "USD" and TABLE.table_version and TABLE.checked
    assert len(TABLE.sha256) == 64


@pytest.mark.parametrize(
    ("model", "tokens", "expected"),
    [
        # 1000*1 + 500*5 + 2000*0.10 + 3000*1.25 + 4000*2 = 15450 micro-dollars
        (
            "claude-haiku-4-5-20251001",
            TokenCounts(
                input=1000, output=500, cache_read=2000, cache_write_5m=3000, cache_write_1h=4000
            ),
            "0.01545",
        ),
        # Exactly 200k prompt tokens is not above the tier: 200000*3 + 1000*15
        ("claude-sonnet-4-5", TokenCounts(input=200_000, output=1000), "0.615"),
        # 210k prompt (150k input + 60k cache read) is above 200k: ALL tokens at tier rates:
        # 150000*6 + 60000*0.60 + 2000*22.50 = 981000
        ("claude-sonnet-4-6", TokenCounts(input=150_000, cache_read=60_000, output=2000), "0.981"),
        # Long-context cache writes: 100000*6 + 50000*7.5 + 60000*12 + 10*22.5 = 1695225
        (
            "claude-sonnet-4-5",
            TokenCounts(input=100_000, cache_write_5m=50_000, cache_write_1h=60_000, output=10),
            "1.695225",
        ),
        # Reasoning inside output at the output rate, counted once: 1200*1.25 + 800*0.125 +
        # 3000*10 = 31600
        ("gpt-5", TokenCounts(input=1200, cache_read=800, output=3000, reasoning=2500), "0.0316"),
        # 12345*0.40 + 1000*0.10 + 678*1.60 = 6122.8
        ("gpt-4.1-mini", TokenCounts(input=12345, cache_read=1000, output=678), "0.0061228"),
        # 3*0.02 = 0.06 micro-dollars
        ("text-embedding-3-small", TokenCounts(input=3), "0.00000006"),
        # 7*15 + 11*18.75 + 13*30 + 17*1.50 + 19*75 = 2151.75
        (
            "claude-opus-4-1",
            TokenCounts(input=7, cache_write_5m=11, cache_write_1h=13, cache_read=17, output=19),
            "0.00215175",
        ),
    ],
)
def test_cost_equals_the_hand_computed_figure(
    model: str, tokens: TokenCounts, expected: str
) -> None:
    assert cost(price(model), tokens) == Decimal(expected)


def test_reasoning_at_its_own_rate_when_it_differs_from_output() -> None:
    odd = parse_prices(ODD.encode(), "odd.toml").model("odd")
    # 600 visible output at 10 + 400 reasoning at 20 = 14000; never 1000*10 + 400*20
    assert cost(odd, TokenCounts(output=1000, reasoning=400)) == Decimal("0.014")


def test_reasoning_cannot_exceed_output() -> None:
    with pytest.raises(ValueError, match="part of output"):
        TokenCounts(output=10, reasoning=11)


def test_an_unknown_model_is_refused_never_priced_at_zero() -> None:
    with pytest.raises(UnknownModelError, match="gpt-9"):
        TABLE.model("gpt-9")


def test_worst_case_uses_the_highest_rates_and_the_models_max_output() -> None:
    sonnet = price("claude-sonnet-4-5")
    # 1000 prompt tokens at the highest input-side rate (1h cache write, 6) + 64000 * 15
    assert worst_case(sonnet, 1000, None) == Decimal("0.966")
    # Above the tier: 300000 * 12 + 100 * 22.5
    assert worst_case(sonnet, 300_000, 100) == Decimal("3.60225")
    embed = price("text-embedding-3-small")
    assert worst_case(embed, 8191, None) == Decimal("0.00016382")


@pytest.mark.parametrize(
    ("field", "body", "problem"),
    [
        ("models.m.input", "input = -1\noutput = 1", "greater than or equal"),
        ("models.m.output", "input = 1", "Field required"),
        ("models.m.colour", 'input = 1\noutput = 1\ncolour = "red"', "Extra inputs"),
        (
            "models.m.max_output_tokens",
            "input = 1\noutput = 1\nmax_output_tokens = -5",
            "greater than or equal",
        ),
        (
            "models.m.tiers.0.output",
            "input = 1\noutput = 1\n[[models.m.tiers]]\nabove_input_tokens = 10\ninput = 2",
            "Field required",
        ),
        (
            "models.m",
            "input = 1\noutput = 1\n[[models.m.tiers]]\nabove_input_tokens = 10\n"
            "input = 2\noutput = 2\n[[models.m.tiers]]\nabove_input_tokens = 5\ninput = 3\n"
            "output = 3",
            "strictly increasing",
        ),
    ],
)
def test_every_bad_field_is_named_with_its_file(
    tmp_path: Path, field: str, body: str, problem: str
) -> None:
    path = tmp_path / "bad.toml"
    limits = "" if "max_output_tokens" in body else "max_output_tokens = 10\n"
    model = f'[models.m]\nvendor = "other"\ncontext_window = 100\n{limits}{body}\n'
    if "[[models.m.tiers]]" in body:
        head, _, tiers = body.partition("[[")
        model = f'[models.m]\nvendor = "other"\ncontext_window = 100\n{limits}{head}\n[[{tiers}\n'
    path.write_text(HEADER + model)
    with pytest.raises(PriceTableError) as err:
        load_prices(path)
    assert err.value.path == str(path)
    assert err.value.field == field
    assert problem in err.value.problem
    assert str(path) in str(err.value) and field in str(err.value)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (HEADER.replace('"USD"', '"EUR"'), "currency"),
        (HEADER.replace("schema = 1", "schema = 2"), "schema"),
        (HEADER.replace("checked = 2026-11-30", 'checked = "last week"'), "checked"),
        (HEADER, "models"),
        ("schema = 1\nthis is not toml", "(file)"),
    ],
)
def test_bad_table_level_fields(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(PriceTableError) as err:
        load_prices(path)
    assert err.value.field == field


def test_an_alias_cannot_name_two_models(tmp_path: Path) -> None:
    path = tmp_path / "dup.toml"
    model = 'vendor = "other"\ninput = 1\noutput = 1\nmax_output_tokens = 1\ncontext_window = 9\n'
    path.write_text(HEADER + f'[models.a]\n{model}\n[models.b]\n{model}aliases = ["a"]\n')
    with pytest.raises(PriceTableError, match="already names model"):
        load_prices(path)


def test_missing_file_is_a_price_table_error(tmp_path: Path) -> None:
    with pytest.raises(PriceTableError, match="cannot read"):
        load_prices(tmp_path / "nope.toml")


def test_sha256_is_of_the_file_bytes(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "odd.toml"
    path.write_text(ODD)
    assert load_prices(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


MODELS = [*REQUIRED_MODELS, "odd"]
ODD_TABLE = parse_prices(ODD.encode(), "odd.toml")


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[ModelPrice, TokenCounts, int, int | None]:
    name = draw(st.sampled_from(MODELS))
    model = ODD_TABLE.model(name) if name == "odd" else TABLE.model(name)
    part = st.integers(0, 150_000)
    tokens_in = [draw(part) for _ in range(4)]
    output = draw(st.integers(0, model.max_output_tokens or 0))
    reasoning = draw(st.integers(0, output))
    tokens = TokenCounts(
        input=tokens_in[0],
        cache_read=tokens_in[1],
        cache_write_5m=tokens_in[2],
        cache_write_1h=tokens_in[3],
        output=output,
        reasoning=reasoning,
    )
    bound = tokens.prompt + draw(st.integers(0, 300_000))
    max_out = draw(st.one_of(st.none(), st.integers(output, output + 10_000)))
    return model, tokens, bound, max_out


@settings(max_examples=600, deadline=None)
@given(outcomes())
def test_worst_case_is_never_under_the_real_cost(
    case: tuple[ModelPrice, TokenCounts, int, int | None],
) -> None:
    model, tokens, bound, max_out = case
    assert worst_case(model, bound, max_out) >= cost(model, tokens)
