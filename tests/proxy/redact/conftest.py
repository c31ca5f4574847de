"""The redaction tests' redactor, holding every key of study_keys.py."""

from __future__ import annotations

import pytest

from proxy.redact.secrets import SecretRedactor
from tests.proxy.redact.study_keys import SECRETS


@pytest.fixture(scope="module")
def redactor() -> SecretRedactor:
    return SecretRedactor(SECRETS)
