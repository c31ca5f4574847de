"""The base of every run-directory record: a `schema` version, and the hook that upgrades old ones.

A record class declares its current version as the default of its `schema_` field (alias
`schema`, so the JSON is unchanged) and, once it has had older versions, one upgrade function
per older version in `upgrades` (version n -> a dict of version n + 1). Validation upgrades an
old record step by step before the fields are checked, so no reader ever sees an old form; a
record newer than this harness knows is refused (never half-read), with the fix in the message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from rundir.errors import RunDirError, SchemaTooNew

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


class RunDirModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # version n -> the function that turns a version-n dict into a version-(n + 1) one.
    upgrades: ClassVar[Mapping[int, Upgrade]] = {}

    @classmethod
    def current_schema(cls) -> int:
        default = cls.model_fields["schema_"].default
        assert isinstance(default, int), f"{cls.__name__}.schema_ needs an int default"
        return default

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        # A record without a `schema` key keeps meaning the current version (as before this
        # hook), and a non-int one is left for the field's own check to name.
        if not isinstance(data, dict) or "schema" not in data:
            return data
        version = data["schema"]
        if type(version) is not int:
            return data
        current = cls.current_schema()
        if version > current:
            raise SchemaTooNew(
                f"{cls.__name__} of schema {version}: this harness reads up to schema {current}",
                hint="the file was written by a newer harness: upgrade harness to read it",
            )
        while version < current:
            step = cls.upgrades.get(version)
            if step is None:
                raise RunDirError(
                    f"{cls.__name__} of schema {version}: this harness cannot upgrade it "
                    f"(it reads schema {min(cls.upgrades, default=current)} to {current})",
                    hint="read it with the harness version that wrote it",
                )
            data = {**step(dict(data)), "schema": version + 1}
            version += 1
        return data


def schema_too_new(error: ValidationError) -> SchemaTooNew | None:
    """The refusal of a too-new record inside a validation error (pydantic wraps it), if any."""
    for detail in error.errors():
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, SchemaTooNew):
            return cause
    return None
