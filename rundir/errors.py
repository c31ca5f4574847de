"""The error a run-directory reader raises, and the user-facing base it shares with the harness.

Its own module, free of pydantic, so the CLI can catch it without paying for the models' imports;
here rather than in harness/ because rundir imports nothing of the harness.
"""

from __future__ import annotations


class UserError(Exception):
    """An error the CLI prints as one message and its hint, without a traceback (HarnessError
    is one too): the message says what went wrong, the hint what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class RunDirError(UserError, ValueError):
    """A run-directory file that cannot be read as it is.

    A ValueError, so a reader that already skips unreadable files skips these too.
    """


class SchemaTooNew(RunDirError):
    """Written by a newer harness: reading it with this one could misread fields it added."""
