"""Secrets cut out of this process's logs: every structlog event and stdlib log record (mitmproxy's
own warnings) passes each installed `SecretRedactor` before any handler sees it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import structlog

from proxy.redact.secrets import SecretRedactor


class _RecordFactory:
    """Makes stdlib log records (mitmproxy's own warnings) with the secrets already cut out, so
    every handler, including one added later, only ever sees the redacted text.

    One factory per process holds every redactor installed and not yet uninstalled: the record
    factory is process-global, and a factory that kept only the first redactor would let a later
    proxy's keys through (seen when one test's in-process proxy ran before another's)."""

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner
        self.redactors: list[SecretRedactor] = []

    def redact(self, text: str) -> str:
        for redactor in self.redactors:
            text = redactor.redact_text(text)
        return text

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        record.msg = self.redact(record.getMessage())
        record.args = None
        if record.exc_info:
            # A formatter uses exc_text when it is set: the traceback is redacted too.
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = self.redact(text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return record


class _LogProcessor:
    def __init__(self) -> None:
        self.redactors: list[SecretRedactor] = []

    def __call__(self, logger: Any, method: str, event: Any) -> Any:
        for redactor in self.redactors:
            event = redactor.redact_value(event)
        return event


def install_log_redaction(redactor: SecretRedactor) -> None:
    """Redact the secrets from every structlog event and stdlib log record of this process, until
    `uninstall_log_redaction(redactor)`.

    The processor goes into structlog's live processor list just before its renderer: loggers
    already cached (cache_logger_on_first_use) share that list object, so they are covered too.
    """
    if not redactor:
        return
    processors = structlog.get_config()["processors"]
    processor = next((p for p in processors if isinstance(p, _LogProcessor)), None)
    if processor is None:
        processor = _LogProcessor()
        processors.insert(max(0, len(processors) - 1), processor)
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _RecordFactory):
        factory = _RecordFactory(factory)
        logging.setLogRecordFactory(factory)
    for holder in (processor, factory):
        if not any(r is redactor for r in holder.redactors):
            holder.redactors.append(redactor)


def uninstall_log_redaction(redactor: SecretRedactor) -> None:
    """Undo `install_log_redaction(redactor)`; the last one out restores the plain factory."""
    processors = structlog.get_config()["processors"]
    for processor in [p for p in processors if isinstance(p, _LogProcessor)]:
        processor.redactors[:] = [r for r in processor.redactors if r is not redactor]
        if not processor.redactors:
            processors.remove(processor)
    factory = logging.getLogRecordFactory()
    if isinstance(factory, _RecordFactory):
        factory.redactors[:] = [r for r in factory.redactors if r is not redactor]
        if not factory.redactors:
            logging.setLogRecordFactory(factory.inner)
