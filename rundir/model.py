"""The base of every run-directory record: a `schema` version, and the hook that upgrades old ones.

A record class declares its current version as the default of its `schema_` field (alias
`schema`, so the JSON is unchanged). A record newer than this harness knows is refused (never
half-read), with the fix in the message. Once a format has had older versions it derives from
`Upgradable` instead and lists one upgrade function per older version in `upgrades` (version n ->
a dict of version n + 1): validation upgrades an old record step by step before the fields are
checked, so no reader ever sees an old form.

Why two classes: a model-level `mode="before"` validator makes pydantic build a Python dict from
every JSON line before validating it, which doubled the time to read 10,000 call records (0.7 s
-> 1.5 s here); the version check alone is a field validator, which keeps the JSON fast path. So
only a format that has something to upgrade pays for the hook.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from rundir.errors import RunDirError, SchemaTooNew

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


class RunDirModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # version n -> the function that turns a version-n dict into a version-(n + 1) one.
    upgrades: ClassVar[Mapping[int, Upgrade]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("upgrades") and not issubclass(cls, Upgradable):
            raise TypeError(f"{cls.__name__} has upgrades: derive it from rundir.model.Upgradable")

    @classmethod
    def current_schema(cls) -> int:
        default = cls.model_fields["schema_"].default
        assert isinstance(default, int), f"{cls.__name__}.schema_ needs an int default"
        return default

    @field_validator("schema_", mode="before", check_fields=False)
    @classmethod
    def _known_version(cls, version: Any) -> Any:
        # A non-int is left for the field's own check to name; an older version reaching this
        # point had no upgrade (Upgradable's hook runs first and leaves the current one).
        if type(version) is not int or version == cls.current_schema():
            return version
        current = cls.current_schema()
        if version > current:
            raise SchemaTooNew(
                f"{cls.__name__} of schema {version}: this harness reads up to schema {current}",
                hint="the file was written by a newer harness: upgrade harness to read it",
            )
        raise RunDirError(
            f"{cls.__name__} of schema {version}: this harness cannot upgrade it "
            f"(it reads schema {min(cls.upgrades, default=current)} to {current})",
            hint="read it with the harness version that wrote it",
        )


class Upgradable(RunDirModel):
    """A run-directory record with older versions, upgraded on the way in."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        # A record without a `schema` key keeps meaning the current version (as before this
        # hook); a newer or unknown one is left for the version check to refuse.
        if not isinstance(data, dict) or type(data.get("schema")) is not int:
            return data
        version = data["schema"]
        while version < cls.current_schema() and version in cls.upgrades:
            data = {**cls.upgrades[version](dict(data)), "schema": version + 1}
            version += 1
        return data


def schema_too_new(error: ValidationError) -> SchemaTooNew | None:
    """The refusal of a too-new record inside a validation error (pydantic wraps it), if any."""
    for detail in error.errors():
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, SchemaTooNew):
            return cause
    return None
