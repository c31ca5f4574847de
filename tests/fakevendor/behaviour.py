"""How the fake vendor misbehaves on one request, parsed from `x-fake-behaviour` or a script.

The syntax is `;`-separated directives, each `name` or `name=value`, e.g.
`status=429;retry_after=2` or `chunk_delay=0.05;cut_after=3`. Directives:

  status=N            answer N with the vendor's JSON error body (429, 500, 503, 529, ...)
  retry_after=S       with status: a `retry-after: S` header
  message=TEXT        with status or error_after: the error message
  error_after=N       stream: N events, then an SSE `error` event, then a clean end (HTTP 200)
  error_type=NAME     with error_after: the vendor's error type (default overloaded / server error)
  cut_after=N         stream: N events, then close without the final chunk (a broken stream);
                      N is capped so the terminal event is never sent
  reset_after=N       stream: N events, then a TCP reset (SO_LINGER 0)
  reset               reset the connection instead of answering
  no_usage            no usage anywhere in the reply (OpenAI: no usage chunk even when asked;
                      Anthropic: message_delta without `usage`; Responses: `usage: null`)
  usage_in_choice_chunk  OpenAI chat stream: usage on the last chunk that has choices, and no
                      choice-less usage chunk (whether or not the client asked for usage)
  first_byte_delay=S  wait S seconds before the status line
  hang                never answer (until the client leaves)
  chunk_delay=S       wait S seconds before every streamed event after the first
  trickle[=S]         send the reply one byte every S seconds (default 0.2), then pad forever
  stall_after=N       stream: N events, then send nothing more, keeping the connection open
  service_tier=NAME   OpenAI: report this service tier (e.g. priority: billed above standard)
  input_tokens=N      bill N input tokens (every usage the reply carries says so), as a vendor
                      does for a document it fetched by URL
  web_searches=N      Anthropic: usage.server_tool_use.web_search_requests=N (and N
                      server_tool_use blocks in a plain reply); OpenAI Responses: N
                      web_search_call output items in the final response
  served_model=NAME   name this model in the reply (message.model / model / response.model)
  cut_bytes=N         plain reply: send the headers and N bytes of the body, then close
  chunked             plain reply: chunked framing instead of content-length
  echo_key=WHERE      quote the received key back: error (a 401 naming it), text, escaped
                      (in the text, as JSON unicode escapes), header, events (split across
                      two deltas), nested (in JSON nested too deep to parse; see echo.py)
  echo_split=N        with echo_key=text: the write carrying the key is split N bytes into it
  encode=NAME         compress the reply (gzip, br, deflate) whatever the client accepts
"""

from __future__ import annotations

from dataclasses import dataclass, fields

TRICKLE_INTERVAL = 0.2

_INT_FIELDS = {"status", "error_after", "cut_after", "reset_after", "stall_after", "echo_split"}
_FLOAT_FIELDS = {"retry_after", "first_byte_delay", "chunk_delay"}
_STR_FIELDS = {"message", "error_type", "service_tier", "echo_key", "encode"}
_FLAGS = {"no_usage", "usage_in_choice_chunk", "hang", "reset"}
# What the reply bills and how a plain body is framed (the live-mode money tests).
_INT_FIELDS |= {"input_tokens", "web_searches", "cut_bytes"}
_STR_FIELDS |= {"served_model"}
_FLAGS |= {"chunked"}


class BehaviourError(ValueError):
    """A behaviour string the fake does not understand: a bug in the test, reported loudly."""


@dataclass(frozen=True)
class Behaviour:
    status: int | None = None
    retry_after: float | None = None
    message: str | None = None
    error_after: int | None = None
    error_type: str | None = None
    cut_after: int | None = None
    reset_after: int | None = None
    reset: bool = False
    no_usage: bool = False
    usage_in_choice_chunk: bool = False
    first_byte_delay: float = 0.0
    hang: bool = False
    chunk_delay: float = 0.0
    trickle: float | None = None  # seconds per byte, when trickling
    stall_after: int | None = None
    service_tier: str | None = None
    echo_key: str | None = None
    echo_split: int | None = None
    encode: str | None = None
    input_tokens: int | None = None
    web_searches: int | None = None
    served_model: str | None = None
    cut_bytes: int | None = None
    chunked: bool = False
    source: str = ""  # the text it was parsed from, for reports

    @property
    def is_normal(self) -> bool:
        return self == Behaviour(source=self.source)

    @property
    def interruption(self) -> tuple[str, int] | None:
        """How and after how many events the stream is interrupted by the fake, if it is:
        ("cut" | "reset" | "stall", n); the earliest wins, cut before reset before stall."""
        options = [
            (n, rank, kind)
            for rank, (kind, n) in enumerate(
                (("cut", self.cut_after), ("reset", self.reset_after), ("stall", self.stall_after))
            )
            if n is not None
        ]
        if not options:
            return None
        n, _, kind = min(options)
        return kind, n


NORMAL = Behaviour()


def parse_behaviour(text: str) -> Behaviour:
    values: dict[str, object] = {}
    known = {f.name for f in fields(Behaviour)} - {"source"}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        name, has_value, raw = part.partition("=")
        name, raw = name.strip().replace("-", "_"), raw.strip()
        if name not in known:
            raise BehaviourError(f"unknown fake behaviour {name!r} in {text!r}")
        try:
            if name == "trickle":
                values[name] = float(raw) if has_value else TRICKLE_INTERVAL
            elif name in _FLAGS:
                if has_value:
                    raise ValueError("takes no value")
                values[name] = True
            elif not has_value:
                raise ValueError("needs a value")
            elif name in _INT_FIELDS:
                values[name] = int(raw)
            elif name in _FLOAT_FIELDS:
                values[name] = float(raw)
            else:
                assert name in _STR_FIELDS
                values[name] = raw
        except ValueError as e:
            raise BehaviourError(f"fake behaviour {part!r}: {e}") from e
    return Behaviour(source=text, **values)  # type: ignore[arg-type]


def as_behaviour(value: str | Behaviour | None) -> Behaviour:
    if value is None:
        return NORMAL
    if isinstance(value, Behaviour):
        return value
    return parse_behaviour(value)
