"""The one error type the CLI prints without a traceback: the message says what to do."""

from __future__ import annotations

from rundir.errors import UserError


class HarnessError(UserError):
    """The harness's own: message and hint as UserError (a run file's reader raises its sibling,
    rundir's RunDirError)."""
