"""The addon's `harness_*` options, declared from rundir.proxy_file.ProxySettings (one option per
field) and read back (purpose rules). Typed loosely so that `loader` needs no mitmproxy import."""

from __future__ import annotations

import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from rundir.proxy_file import ProxySettings, PurposeRule, option_value


def declare_options(loader: Any) -> None:
    """Declare every ProxySettings field as option `harness_<field>` (the addon's `load`).
    `loader` is mitmproxy's Loader; typed loosely so this module never imports mitmproxy."""
    for name, field in ProxySettings.model_fields.items():
        if field.exclude:
            continue
        typespec, choices = _option_type(field.annotation)
        default = field.get_default(call_default_factory=True)
        loader.add_option(
            f"harness_{name}",
            typespec,
            option_value(None if default is PydanticUndefined else default),
            field.description or name,
            choices=choices,
        )


def _option_type(annotation: Any) -> tuple[Any, list[str] | None]:
    """The mitmproxy option type of a field: paths are strings ('' = none), lists of models are
    lists of JSON strings."""
    origin = get_origin(annotation)
    if origin is Literal:
        return str, [str(a) for a in get_args(annotation)]
    if origin in (Union, types.UnionType) or annotation is Path:
        return str, None
    if origin is list:
        return Sequence[str], None
    if annotation in (str, int, float, bool):
        return annotation, None
    raise TypeError(f"no mitmproxy option type for {annotation!r}")


def parse_purposes(entries: Sequence[str]) -> list[PurposeRule]:
    """`harness_purposes` back into rules; ValueError naming the bad entry."""
    rules = []
    for entry in entries:
        try:
            rules.append(PurposeRule.model_validate_json(entry))
        except ValidationError as e:
            raise ValueError(
                f"harness_purposes entry {entry!r} is not a purpose rule: "
                f"{e.errors(include_url=False)[0]['msg']}"
            ) from None
    return rules
