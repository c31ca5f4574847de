"""Keys kept out of what the arm and the logs see: the secret redactor (secrets.py) and the forms
of a secret it searches for (secret_forms.py), the same cut applied to this process's logs
(log_redaction.py), its guard over a stream's event texts, and the reply-body cleaner live mode
runs on plain and streamed replies.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from proxy.redact.log_redaction import install_log_redaction, uninstall_log_redaction
from proxy.redact.secrets import SecretRedactor
from proxy.redact.stream import UNDECODABLE, StreamCleaner, redact_head, redact_plain

__all__ = [
    "UNDECODABLE",
    "SecretRedactor",
    "StreamCleaner",
    "install_log_redaction",
    "redact_head",
    "redact_plain",
    "uninstall_log_redaction",
]
