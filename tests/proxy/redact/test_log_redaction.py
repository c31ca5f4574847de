"""proxy.redact.log_redaction: the study's keys are cut out of every structlog event and stdlib
log record of the process (mitmproxy's own warnings, tracebacks), through loggers cached before
and handlers added after, and a later proxy's keys as well as an earlier one's."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

from proxy.redact.log_redaction import install_log_redaction, uninstall_log_redaction
from proxy.redact.secrets import SecretRedactor
from tests.proxy.redact.study_keys import ANT, CO, OAI, no_secret


@pytest.fixture
def own_logging() -> Iterator[None]:
    """structlog's configuration and the log record factory are the process's: a test that
    configures them gives them back as they were."""
    saved = structlog.get_config()
    factory = logging.getLogRecordFactory()
    try:
        yield
    finally:
        logging.setLogRecordFactory(factory)
        structlog.configure(**saved)


@pytest.mark.usefixtures("own_logging")
def test_log_redaction_covers_structlog_and_stdlib_logging(
    redactor: SecretRedactor, capsys: pytest.CaptureFixture[str]
) -> None:
    root = logging.getLogger()
    structlog.configure(
        processors=[structlog.processors.JSONRenderer()],
        logger_factory=structlog.PrintLoggerFactory(),
        cache_logger_on_first_use=True,
    )
    log = structlog.get_logger("t")
    log.info("before", key="none")  # cached now, before the redaction is installed
    install_log_redaction(redactor)
    install_log_redaction(redactor)  # idempotent
    log.warning("upstream said", detail=f"Incorrect API key provided: {OAI}")
    # A handler added after the redaction was installed is covered too.
    handler = logging.StreamHandler()
    root.addHandler(handler)
    logging.getLogger("mitmproxy").warning("server said %s", ANT)
    try:
        raise ValueError(f"bad {CO}")
    except ValueError:
        logging.getLogger("mitmproxy").exception("failed")
    root.removeHandler(handler)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "[redacted:OPENAI_API_KEY]" in text and "[redacted:ANTHROPIC_API_KEY]" in text
    assert "ValueError: bad [redacted:CO_API_KEY]" in text
    no_secret(text.encode())


@pytest.mark.usefixtures("own_logging")
def test_a_second_proxys_keys_are_redacted_after_a_first_left_its_redaction_installed(
    redactor: SecretRedactor, caplog: pytest.LogCaptureFixture
) -> None:
    """The record factory is process-global: a proxy of an earlier test (or an earlier run in
    this process) must not keep a later proxy's keys out of the redaction.

    The test runs in a structlog configuration of its own: an in-process proxy of another test on
    this worker (one that stopped without its close) may have left its redactor installed in the
    shared one, and what is checked here is that these two leave nothing behind."""
    earlier = SecretRedactor({"OPENAI_API_KEY": "sk-proj-Earlier_key-00000000000000000000"})
    structlog.configure(processors=[structlog.processors.JSONRenderer()])
    logging.setLogRecordFactory(logging.LogRecord)
    install_log_redaction(earlier)
    install_log_redaction(redactor)
    logging.getLogger("mitmproxy").warning("server said %s and %s", ANT, OAI)
    assert ANT not in caplog.text and OAI not in caplog.text
    assert "[redacted:ANTHROPIC_API_KEY]" in caplog.text
    uninstall_log_redaction(earlier)
    uninstall_log_redaction(redactor)
    assert logging.getLogRecordFactory() is logging.LogRecord
    assert not any(
        type(p).__name__ == "_LogProcessor" for p in structlog.get_config()["processors"]
    )
