"""How a study's validation error reads to the user: one line per field at fault, named by its
dotted path, so a study, an arm's compose service or an items line says exactly what to fix."""

from __future__ import annotations

from pydantic import ValidationError


def field_errors(e: ValidationError, prefix: str = "") -> str:
    """The fields `e` names, one per line (indented to follow a first line ending in ':')."""
    lines = []
    for err in e.errors(include_url=False):
        where = prefix + ".".join(str(p) for p in err["loc"] if p != "function-after")
        lines.append(f"{where or 'file'}: {err['msg']}")
    return "\n  ".join(lines)
