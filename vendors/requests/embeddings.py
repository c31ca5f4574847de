"""The checks of OpenAI's POST /v1/embeddings that the live proxy reads too: the model and the
inputs (at most MAX_INPUTS, each at most MAX_INPUT_TOKENS). The encoding and dimensions are
checked by the stub (stubs.vectors.embeddings), which knows each model's width."""

from __future__ import annotations

from typing import Any

from vendors.errors import VendorRequestError
from vendors.tokens import estimate_tokens

MAX_INPUTS = 2048  # OpenAI's limit on inputs per request


MAX_INPUT_TOKENS = 8192  # OpenAI's per-input context limit for its embedding models


def check_embeddings(body: dict[str, Any]) -> None:
    """The checks of what the live proxy reads (proxy.flow.intake runs them in both modes); the
    encoding and dimensions are checked by the stub, which knows each model's width."""
    requested_embedding_model(body)
    embedding_inputs(body.get("input"))


def requested_embedding_model(body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise VendorRequestError(400, "you must provide a model parameter", "model")
    if not isinstance(model, str) or not model:
        raise VendorRequestError(400, "Invalid type for 'model': expected a string.", "model")
    return model


def _invalid_input() -> VendorRequestError:
    # OpenAI's wording for an empty or malformed `input`.
    return VendorRequestError(
        400,
        "'$.input' is invalid. Please check the API reference: "
        "https://platform.openai.com/docs/api-reference.",
        "input",
    )


def _is_token_ids(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value)
    )


def embedding_inputs(value: Any) -> tuple[list[str], list[int]]:
    """The texts to embed and the tokens each costs. Token-id inputs embed their decimal text."""
    if value is None:
        raise VendorRequestError(400, "Missing required parameter: 'input'.", "input")
    items: list[Any]
    if isinstance(value, str) or _is_token_ids(value):
        items = [value]
    elif isinstance(value, list) and value:
        items = value
    else:
        raise _invalid_input()
    if len(items) > MAX_INPUTS:
        raise VendorRequestError(
            400, f"'$.input' is invalid: at most {MAX_INPUTS} inputs per request.", "input"
        )
    texts: list[str] = []
    tokens: list[int] = []
    for item in items:
        if isinstance(item, str) and item:
            texts.append(item)
            tokens.append(estimate_tokens(item))
        elif _is_token_ids(item):
            texts.append(" ".join(str(t) for t in item))
            tokens.append(len(item))
        else:
            raise _invalid_input()
        if tokens[-1] > MAX_INPUT_TOKENS:
            raise VendorRequestError(
                400,
                f"This model's maximum context length is {MAX_INPUT_TOKENS} tokens, however you "
                f"requested {tokens[-1]} tokens in the input. Please reduce your input.",
                "input",
            )
    return texts, tokens
