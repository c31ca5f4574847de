"""Secrets never leave the proxy: every configured secret is cut out of what an upstream sends back.

An upstream can quote the study's key back: a 401 "Incorrect API key provided: sk-...", a reply
text, a header, an SSE stream with the key split across network chunks. `SecretRedactor` replaces
each occurrence, in bytes, with a fixed marker such as `[redacted:OPENAI_API_KEY]` before anything
is relayed to an arm or stored in the run. The marker is printable ASCII without quotes,
backslashes or line breaks, so a JSON string stays a JSON string and an SSE line stays one line
(keys are ASCII too, so a match never cuts a multi-byte UTF-8 character in half). Header names
get `redacted-OPENAI_API_KEY`, which is a valid header token.

Besides the literal key, each character may appear as a JSON `\\uXXXX` escape (`\\/` for a slash)
or as URL percent-encoding, mixed freely: a vendor serialising the key differently still matches.
The key's base64 forms (at each of the three alignments, standard and URL-safe alphabets) are
redacted too. A body with no escape of an ASCII character is searched with `bytes.find` (about
10 ms a megabyte); one with such escapes with the per-character patterns (about 250 ms).

`StreamRedactor` is the same for a body that arrives in pieces: it holds back only the tail that
could still be the start of a secret (at most the longest match less one byte; nothing when the
chunk ends in, say, "\\n\\n"), so an SSE stream is not delayed, and `finish()` releases the tail
redacted. A stream that is cut simply never releases its held tail.

Pure: no mitmproxy import, so the unit tests exercise it directly.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import structlog

#: A configured value shorter than this is not a vendor key (they are 40 to 200 characters) and
#: redacting it everywhere would mangle ordinary text; it is skipped, with a warning.
MIN_SECRET_LENGTH = 8
FLAG = "secret_redacted"

_NAME_OK = re.compile(r"[^A-Za-z0-9_.-]")
# The start of an escape whose end has not arrived yet: held back, it may begin a secret.
_PARTIAL_ESCAPE = rb"(?:\\(?:u[0-9a-fA-F]{0,3})?|%[0-9a-fA-F]?)?"
# Escapes of ASCII, the only characters a secret has: "\u2019" (a vendor's
# apostrophe) or "%C3" cannot be part of one, so they do not send a body to the slow patterns.
_ASCII_UNICODE = re.compile(rb"\\u00[0-7][0-9a-fA-F]")
_ASCII_PERCENT = re.compile(rb"%[0-7][0-9a-fA-F]")


def _has_escape(data: bytes) -> bool:
    """Whether `data` holds an escape a secret's character could be written with (whole, or
    cut off at its end). Plain `in` tests first: this runs on every chunk."""
    if b"\\/" in data:
        return True
    if b"\\u00" in data and _ASCII_UNICODE.search(data):
        return True
    if b"%" in data and _ASCII_PERCENT.search(data):
        return True
    tail = data[-6:]
    return b"\\" in tail or b"%" in tail


def _hex(value: int, width: int) -> bytes:
    """A case-insensitive regex for `value` in hex (vendors write \\u00e9 and \\u00E9 alike)."""
    out = b""
    for digit in f"{value:0{width}x}":
        out += f"[{digit}{digit.upper()}]".encode() if digit.isalpha() else digit.encode()
    return out


def _char_forms(char: str, escaped: bool = True) -> bytes:
    """Every way one character of a secret may be written: literal, JSON \\u escape, %XX."""
    code = ord(char)
    forms = [re.escape(char.encode())]
    if escaped:
        forms += [rb"\\u" + _hex(code, 4), b"%" + _hex(code, 2)]
    if char == "/":
        forms.append(rb"\\/")
    return b"(?:" + b"|".join(forms) + b")"


def _base64_forms(secret: str) -> list[str]:
    """The part of any base64 text that encodes `secret`, for each of its 3 alignments and
    both alphabets: the characters that depend on the secret's bytes alone."""
    out = []
    for align in range(3):
        data = b"\0" * align + secret.encode()
        first, last = -(-8 * align // 6), 8 * len(data) // 6
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            out.append(encode(data)[first:last].decode())
    return out


def _max_form_length(secret: str) -> int:
    return sum(6 for _ in secret)  # the longest form of any ASCII character is \uXXXX


class SecretRedactor:
    """The configured secrets, each with the name its marker shows (an env variable name)."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.names: dict[str, str] = {}  # secret -> name
        self.skipped: list[str] = []  # names whose value is too short to be a key
        for name, value in secrets.items():
            if not value:
                continue
            if len(value) < MIN_SECRET_LENGTH or not value.isascii():
                self.skipped.append(name)
                continue
            self.names.setdefault(value, _NAME_OK.sub("_", name) or "SECRET")
        # Each secret's base64 forms count as the secret (a "Basic" header, an echoed header
        # dump). They come after the secrets, which alone get the per-character escapes.
        secrets_first = sorted(self.names, key=len, reverse=True)
        encoded: dict[str, str] = {}
        for secret in secrets_first:
            for form in _base64_forms(secret):
                encoded.setdefault(form, self.names[secret])
        forms = {**dict.fromkeys(secrets_first), **encoded}
        entries = [*secrets_first, *sorted(set(encoded) - set(self.names), key=len, reverse=True)]
        named = {**encoded, **self.names}
        self.markers = [f"[redacted:{named[s]}]".encode() for s in entries]
        self.header_markers = [f"redacted-{named[s]}".encode() for s in entries]
        self.max_length = max((_max_form_length(s) for s in forms), default=0)
        self.longest = max((len(s) for s in forms), default=0)  # in characters, unescaped
        self._find: re.Pattern[bytes] | None = None
        self._hold: re.Pattern[bytes] | None = None
        literals = [(s.encode(), index) for index, s in enumerate(entries)]
        self._all = _Literals(literals)
        self._encoded = _Literals(literals[len(secrets_first) :])
        if secrets_first:
            self._find, self._hold = _patterns([[_char_forms(c) for c in s] for s in secrets_first])

    def _matches(self, data: bytes, escaped: bool) -> list[tuple[int, int, int]]:
        """Every occurrence, overlapping ones included: (start, end, entry), by start and
        longest first. `escaped`: `_has_escape(data)`, which the caller computed once."""
        assert self._find is not None
        found: list[tuple[int, int, int]] = []
        if escaped:
            for match in self._find.finditer(data):
                index = match.lastindex
                assert index is not None
                found.append((match.start(), match.end(index), index - 1))
            found += self._encoded.matches(data)
        else:
            # Most bodies hold no escape at all: then only the literal keys can be in them,
            # and bytes.find is much faster than the per-character patterns.
            found = self._all.matches(data)
        found.sort(key=lambda m: (m[0], -m[1]))
        return found

    def _held_from(self, data: bytes, lowest: int, escaped: bool) -> int:
        """Where a tail of `data` (from `lowest` on) that could still grow into a secret
        starts; len(data) if there is none."""
        assert self._hold is not None
        if not escaped:
            return self._all.held_from(data, lowest)
        held = self._hold.search(data, max(lowest, len(data) - self.max_length + 1))
        best = held.start() if held is not None else len(data)
        return min(best, self._encoded.held_from(data, lowest))

    def __bool__(self) -> bool:
        return bool(self.names)

    def partial_start(self, data: bytes) -> int:
        """Where the tail of `data` that could still grow into a secret starts (len: none)."""
        if self._hold is None:
            return len(data)
        return self._held_from(data, 0, _has_escape(data))

    def settled(self, data: bytes, hold: int) -> bool:
        """Whether `data` holds no secret and ends in fewer than `hold` bytes that could still
        start one: `redact(data)` would change nothing and `len(data) - partial_start(data)`
        is under `hold`, found with one escape test and, without escapes, two C searches."""
        if self._hold is None:
            return True
        escaped = _has_escape(data)
        if escaped:
            if self.redact(data)[1]:
                return False
        elif self._all.found_in(data):
            return False
        return len(data) - self._held_from(data, 0, escaped) < hold

    def stream(self, markers: list[bytes] | None = None) -> StreamRedactor:
        return StreamRedactor(self, markers or self.markers)

    def redact(self, data: bytes) -> tuple[bytes, int]:
        """`data` with every secret replaced, and how many occurrences were replaced."""
        if self._find is None or not data:
            return data, 0
        if not _has_escape(data) and not self._all.found_in(data):
            # The common case (the key guard asks this of every text delta): no escape, so only
            # a literal could match, and none is in `data`; what the stream would return.
            return data, 0
        stream = self.stream()
        out = stream.feed(data) + stream.finish()
        return out, stream.hits

    def redact_text(self, text: str) -> str:
        if self._find is None:
            return text
        # surrogatepass: a hostile string with a lone surrogate still round-trips unchanged.
        data, hits = self.redact(text.encode("utf-8", "surrogatepass"))
        return data.decode("utf-8", "surrogatepass") if hits else text

    def redact_headers(
        self, fields: Iterable[tuple[bytes, bytes]]
    ) -> tuple[list[tuple[bytes, bytes]], int]:
        """Header fields with secrets replaced in names (a token marker) and values."""
        fields = list(fields)
        # One search over all of them first: a secret or an escape in any field is in the joined
        # bytes too (a field's cut-off escape at its end can complete no secret), so fields
        # that pass it need no per-field pass; every live reply's head asks this.
        joined = b"\n".join(part for field in fields for part in field)
        if self._find is None or not (_has_escape(joined) or self._all.found_in(joined)):
            return fields, 0
        out: list[tuple[bytes, bytes]] = []
        hits = 0
        for name, value in fields:
            stream = self.stream(self.header_markers)
            new_name = stream.feed(name) + stream.finish()
            new_value, value_hits = self.redact(value)
            hits += stream.hits + value_hits
            out.append((new_name, new_value))
        return out, hits

    def redact_value(self, value: Any) -> Any:
        """Strings and bytes anywhere inside dicts, lists and tuples (a log event's fields)."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, bytes):
            return self.redact(value)[0]
        if isinstance(value, dict):
            return {self.redact_value(k): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.redact_value(v) for v in value)
        return value


#: Up to this many bytes, one regex finds a literal secret faster than an `in` per secret.
_REGEX_UP_TO = 600


class _Literals:
    """Literal secrets searched with bytes.find: occurrences, and a tail that could start one."""

    def __init__(self, entries: list[tuple[bytes, int]]) -> None:
        self.entries = entries
        # A tail that is a proper prefix of some secret (one byte short of it at most): one
        # compiled pattern of nested prefixes, `a(?:b(?:c)?)?`, anchored at the end. The regex
        # engine tries every start in C; a loop over the secrets with bytes.find cost ~20 us
        # per chunk in Python (profiled: the largest part of a stream's per-event work).
        prefixes = [
            _nested_prefix([re.escape(e[i : i + 1]) for i in range(len(e) - 1)])
            for e, _ in entries
            if len(e) > 1
        ]
        self.longest = max((len(e) for e, _ in entries), default=0)
        self.tail = re.compile(b"(?:" + b"|".join(prefixes) + rb")\Z") if prefixes else None
        # One search in C for any of them: a loop of `in` tests costs 2 us a call, and the
        # stream tap asks this of every text delta. On long data the regex, which tries every
        # alternative at each position, is the slower (46 us against 14 on a 10 KB chunk).
        literals = b"|".join(re.escape(e) for e, _ in entries)
        self._any = re.compile(literals) if entries else None
        self._secrets = [e for e, _ in entries]

    def found_in(self, data: bytes) -> bool:
        if len(data) > _REGEX_UP_TO:
            return any(secret in data for secret in self._secrets)
        return self._any is not None and self._any.search(data) is not None

    def matches(self, data: bytes) -> list[tuple[int, int, int]]:
        found = []
        for entry, index in self.entries:
            at = data.find(entry)
            while at >= 0:
                found.append((at, at + len(entry), index))
                at = data.find(entry, at + 1)
        return found

    def held_from(self, data: bytes, lowest: int) -> int:
        if self.tail is None:
            return len(data)
        # The earliest start whose rest is a prefix: the leftmost match of the pattern.
        held = self.tail.search(data, max(lowest, len(data) - self.longest + 1))
        return held.start() if held is not None else len(data)


def _patterns(forms: list[list[bytes]]) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A finder of every occurrence (one group per secret) and a finder of a tail that could
    still grow into one."""
    groups = b"|".join(b"(" + b"".join(f) + b")" for f in forms)
    # A lookahead finds every start, so overlapping occurrences are all seen.
    find = re.compile(b"(?=(?:" + groups + b"))")
    prefixes = b"|".join(_nested_prefix(f) for f in forms)
    hold = re.compile(b"(?:" + prefixes + b"|)" + _PARTIAL_ESCAPE + rb"\Z")
    return find, hold


def _nested_prefix(forms: list[bytes]) -> bytes:
    """A regex for any prefix of the secret (one or more characters): `a(?:b(?:c)?)?`."""
    inner = b""
    for form in reversed(forms[1:]):
        inner = b"(?:" + form + inner + b")?"
    return forms[0] + inner


class StreamRedactor:
    """Redacts a body fed in chunks. Offsets below are absolute positions in the raw stream."""

    def __init__(self, config: SecretRedactor, markers: list[bytes]) -> None:
        self.config = config
        self.markers = markers
        self.hits = 0
        self._context = b""  # raw bytes already released, kept to see a secret that overlaps
        self._pending = b""  # raw bytes not yet released
        self._released = 0  # raw offset up to which output has been produced
        self._run_end = 0  # raw offset where the last redacted run ends
        self.finished = False

    @property
    def held(self) -> int:
        """How many raw bytes are held back, waiting to see whether they start a secret."""
        return len(self._pending)

    def feed(self, chunk: bytes) -> bytes:
        if self.config._find is None:
            return chunk
        self._pending += chunk
        return self._release(final=False)

    def finish(self, chunk: bytes = b"") -> bytes:
        """The end of the body: everything left, redacted."""
        self.finished = True
        if self.config._find is None:
            return chunk
        self._pending += chunk
        return self._release(final=True)

    def _release(self, final: bool) -> bytes:
        buf = self._context + self._pending
        base = self._released - len(self._context)
        pos = len(self._context)  # output exists up to here (relative to buf)
        # Once per release: it decides which search both steps below use.
        escaped = _has_escape(buf)
        # The earliest tail that could still grow into a secret waits for more bytes.
        safe = len(buf) if final else self.config._held_from(buf, pos, escaped)
        run_end = self._run_end - base
        out = bytearray()
        # Most chunks hold no escape and no key: one C search says so, and they pass as they are.
        plain = not escaped and not self.config._all.found_in(buf)
        for start, end, index in () if plain else self.config._matches(buf, escaped):
            if start >= safe and start >= run_end:
                break  # not complete yet, or in the held tail: the next call sees it whole
            if start < run_end or start < pos:
                # Overlaps a secret already replaced: its marker covers this one too.
                run_end = max(run_end, end)
                continue
            out += buf[max(pos, run_end) : start]
            out += self.markers[index]
            self.hits += 1
            run_end = end
        upto = max(safe, run_end)
        if run_end < upto:
            out += buf[max(pos, run_end) : upto]
        self._released = base + upto
        self._run_end = base + run_end
        # Released bytes are kept only while a secret could overlap the last one replaced
        # (it would start inside that one's run); otherwise nothing before `upto` matters.
        keep = self.config.max_length - 1
        recent = self._run_end > self._released - keep
        self._context = buf[max(0, upto - keep) : upto] if recent else b""
        self._pending = buf[upto:]
        return bytes(out)


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
