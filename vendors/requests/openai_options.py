"""Type and range checks of the OpenAI option fields that no stub reads but the live proxy does
(token limits, service tier, stream options...): a wrong type is OpenAI's 400, never a crash or a
200 from the stubs. Wording from OpenAI's own errors ("Invalid type for 'n': expected an integer,
but got a string instead.")."""

from __future__ import annotations

from typing import Any

from vendors.errors import VendorRequestError
from vendors.requests.openai_common import number_text

# JSON type names as OpenAI's errors spell them ("expected an integer, but got a string").
_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a decimal",
    str: "a string",
    list: "an array",
    dict: "an object",
}


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), "null" if value is None else "another type")


def check_options(
    body: dict[str, Any],
    *,
    ints: dict[str, int] | None = None,
    numbers: dict[str, tuple[float, float]] | None = None,
    bools: tuple[str, ...] = (),
    strings: tuple[str, ...] = (),
    objects: tuple[str, ...] = (),
) -> None:
    """Type (and range) of optional fields, in OpenAI's wording; null means unset. `ints` maps a
    field to its minimum, `numbers` to its (minimum, maximum)."""

    def bad_type(name: str, expected: str, value: Any) -> VendorRequestError:
        return VendorRequestError(
            400,
            f"Invalid type for '{name}': expected {expected}, but got {_type_name(value)} instead.",
            name,
            "invalid_type",
        )

    for name, minimum in (ints or {}).items():
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad_type(name, "an integer", value)
        if value < minimum:
            raise VendorRequestError(
                400,
                f"Invalid '{name}': integer below minimum value. Expected a value >= {minimum}, "
                f"but got {value} instead.",
                name,
                "integer_below_min_value",
            )
    for name, (low, high) in (numbers or {}).items():
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad_type(name, "a decimal", value)
        if not low <= value <= high:
            raise VendorRequestError(
                400,
                f"Invalid '{name}': expected a value between {number_text(low)} and "
                f"{number_text(high)}, but got {number_text(value)} instead.",
                name,
                "decimal_out_of_range",
            )
    for names, kind, expected in (
        (bools, bool, "a boolean"),
        (strings, str, "a string"),
        (objects, dict, "an object"),
    ):
        for name in names:
            value = body.get(name)
            if value is not None and not isinstance(value, kind):
                raise bad_type(name, expected, value)


def check_chat_options(body: dict[str, Any]) -> None:
    check_options(
        body,
        ints={"max_tokens": 1, "max_completion_tokens": 1, "seed": -(2**63)},
        numbers={"presence_penalty": (-2, 2), "frequency_penalty": (-2, 2)},
        bools=("parallel_tool_calls", "store"),
        strings=("service_tier", "reasoning_effort", "user", "verbosity", "prompt_cache_key"),
        objects=("metadata", "logit_bias"),
    )
    stop = body.get("stop")
    if stop is not None and not (
        isinstance(stop, str) or (isinstance(stop, list) and all(isinstance(x, str) for x in stop))
    ):
        raise VendorRequestError(
            400, "Invalid type for 'stop': expected a string or an array of strings.", "stop"
        )


def check_responses_options(body: dict[str, Any]) -> None:
    # OpenAI refuses a max_output_tokens below 16.
    check_options(
        body,
        ints={"max_output_tokens": 16, "max_tool_calls": 1},
        bools=("parallel_tool_calls", "store", "background"),
        strings=("service_tier", "previous_response_id", "truncation", "user", "prompt_cache_key"),
        objects=("metadata", "stream_options", "conversation", "prompt"),
    )
    options = body.get("stream_options")
    if isinstance(options, dict):
        check_options(options, bools=("include_obfuscation",))


def check_stream_options(options: dict[str, Any]) -> None:
    check_options(options, bools=("include_usage", "include_obfuscation"))
