"""The addon's `harness_*` options, declared from rundir.control.proxy_file.ProxySettings (one
option per field) and read back: listeners, purpose rules, upstreams, amounts, and the keys from the
environment. Typed loosely so that `loader` needs no mitmproxy import; a bad value is a
ValueError, which the addon turns into mitmproxy's OptionsError."""

from __future__ import annotations

import os
import types
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from rundir.control import ProxySettings, PurposeRule, option_value
from vendors.hosts import DEFAULT_UPSTREAMS, VENDORS


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


def parse_arm_ports(specs: Sequence[str]) -> dict[int, str]:
    """`harness_arm_ports` (PORT=ARM each): the arm (instance) each listener's calls belong to."""
    ports: dict[int, str] = {}
    for spec in specs:
        port, sep, arm = spec.partition("=")
        if not sep or not port.isdigit() or not arm:
            raise ValueError(f"harness_arm_ports entry {spec!r} must look like 8081=arm-name")
        ports[int(port)] = arm
    return ports


def parse_upstreams(specs: Sequence[str]) -> dict[str, str]:
    """Each vendor's base URL: the defaults, overridden by `harness_upstreams` (VENDOR=URL)."""
    result: dict[str, str] = {str(k): v for k, v in DEFAULT_UPSTREAMS.items()}
    for spec in specs:
        vendor, sep, url = spec.partition("=")
        if not sep or vendor not in VENDORS or not url.startswith(("http://", "https://")):
            raise ValueError(
                f"upstream {spec!r} must look like openai=https://host[:port][/path], "
                f"with a vendor among {', '.join(VENDORS)}"
            )
        result[vendor] = url
    return result


def parse_usd(option: str, value: str) -> Decimal:
    """The harness's one USD reader (ledger/usd.py), as a ValueError for the options' checks."""
    from ledger.usd import BadAmount
    from ledger.usd import parse_usd as read_usd

    try:
        return read_usd(value, option, allow_zero=True)
    except BadAmount as e:
        raise ValueError(str(e)) from None


def live_keys() -> dict[str, str]:
    """The study's vendor keys, from the proxy's own environment only."""
    from proxy.live import KEY_ENV

    return {vendor: os.environ[env] for vendor, env in KEY_ENV.items() if os.environ.get(env)}
