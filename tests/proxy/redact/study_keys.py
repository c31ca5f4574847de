"""Study keys in the shapes vendors issue (a slash and a plus included), shared by the redaction
tests (conftest.py's `redactor` holds them all), and the check that none is left in some bytes."""

from __future__ import annotations

ANT = "sk-ant-api03-Zx9_qLm-0123456789abcdefABCDEF"
OAI = "sk-proj-Qw3rty_UIOP-fedcba9876543210xyz"
CO = "co-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
VOY = "pa-Voyage/Key+With/Slashes-0123456789"
SECRETS = {
    "ANTHROPIC_API_KEY": ANT,
    "OPENAI_API_KEY": OAI,
    "CO_API_KEY": CO,
    "VOYAGE_API_KEY": VOY,
}


def no_secret(data: bytes) -> None:
    for secret in SECRETS.values():
        assert secret.encode() not in data, data
