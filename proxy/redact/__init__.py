"""Keys kept out of what the arm and the logs see: the secret redactor, its guard over a stream's
event texts, and the reply-body cleaner live mode runs on plain and streamed replies.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "events",
    "secrets",
    "stream",
]
