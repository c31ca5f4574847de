"""Field checks shared by the loaders: each names the first bad field, as `where.field`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.datasets.model import DatasetError


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"cannot read {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None


def need(entry: dict[str, Any], field: str, where: str) -> Any:
    if field not in entry:
        raise DatasetError(f"{where}.{field}: missing")
    return entry[field]


def need_str(entry: dict[str, Any], field: str, where: str) -> str:
    value = need(entry, field, where)
    if not isinstance(value, str):
        raise DatasetError(f"{where}.{field}: not a string ({type(value).__name__})")
    return value


def need_list(entry: dict[str, Any], field: str, where: str) -> list[Any]:
    value = need(entry, field, where)
    if not isinstance(value, list):
        raise DatasetError(f"{where}.{field}: not a list ({type(value).__name__})")
    return value
