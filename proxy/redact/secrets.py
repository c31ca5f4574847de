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

import re
from collections.abc import Iterable, Mapping
from typing import Any

from proxy.redact.secret_forms import (
    Literals,
    base64_forms,
    char_forms,
    has_escape,
    max_form_length,
    patterns,
)

#: A configured value shorter than this is not a vendor key (they are 40 to 200 characters) and
#: redacting it everywhere would mangle ordinary text; it is skipped, with a warning.
MIN_SECRET_LENGTH = 8
FLAG = "secret_redacted"
_NAME_OK = re.compile(r"[^A-Za-z0-9_.-]")


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
            for form in base64_forms(secret):
                encoded.setdefault(form, self.names[secret])
        forms = {**dict.fromkeys(secrets_first), **encoded}
        entries = [*secrets_first, *sorted(set(encoded) - set(self.names), key=len, reverse=True)]
        named = {**encoded, **self.names}
        self.markers = [f"[redacted:{named[s]}]".encode() for s in entries]
        self.header_markers = [f"redacted-{named[s]}".encode() for s in entries]
        self.max_length = max((max_form_length(s) for s in forms), default=0)
        self.longest = max((len(s) for s in forms), default=0)  # in characters, unescaped
        self._find: re.Pattern[bytes] | None = None
        self._hold: re.Pattern[bytes] | None = None
        literals = [(s.encode(), index) for index, s in enumerate(entries)]
        self._all = Literals(literals)
        self._encoded = Literals(literals[len(secrets_first) :])
        if secrets_first:
            self._find, self._hold = patterns([[char_forms(c) for c in s] for s in secrets_first])

    def _matches(self, data: bytes, escaped: bool) -> list[tuple[int, int, int]]:
        """Every occurrence, overlapping ones included: (start, end, entry), by start and
        longest first. `escaped`: `has_escape(data)`, which the caller computed once."""
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
        return self._held_from(data, 0, has_escape(data))

    def settled(self, data: bytes, hold: int) -> bool:
        """Whether `data` holds no secret and ends in fewer than `hold` bytes that could still
        start one: `redact(data)` would change nothing and `len(data) - partial_start(data)`
        is under `hold`, found with one escape test and, without escapes, two C searches."""
        if self._hold is None:
            return True
        escaped = has_escape(data)
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
        if not has_escape(data) and not self._all.found_in(data):
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
        if self._find is None or not (has_escape(joined) or self._all.found_in(joined)):
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
        escaped = has_escape(buf)
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
