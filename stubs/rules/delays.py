"""Delay and hang modes for record mode, so deadline handling can be tested without a vendor.

A stubs file may hold `[[delays]]` entries; the first whose `arm`/`purpose`/`route` all match a
call applies. Fields:
  first_byte_ms      wait before the reply's headers
  chunk_ms           wait before every streamed chunk after the first
  hang_before_headers  never answer (until the client gives up)
  stall_after_chunks   send this many chunks, then stall forever mid-stream
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DelayRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arm: str | None = None
    purpose: str | None = None
    route: str | None = None
    first_byte_ms: float = Field(0.0, ge=0)
    chunk_ms: float = Field(0.0, ge=0)
    hang_before_headers: bool = False
    stall_after_chunks: int | None = Field(None, ge=0)
    # Close the connection after this many chunks with no end of body, as a vendor's broken
    # stream does (replay uses it to serve a recorded cut stream as it was cut).
    cut_after_chunks: int | None = Field(None, ge=0)

    def matches(self, arm: str | None, purpose: str, route: str) -> bool:
        return (
            (self.arm is None or self.arm == arm)
            and (self.purpose is None or self.purpose == purpose)
            and (self.route is None or self.route == route)
        )

    @property
    def is_noop(self) -> bool:
        return (
            self.first_byte_ms == 0
            and self.chunk_ms == 0
            and not self.hang_before_headers
            and self.stall_after_chunks is None
            and self.cut_after_chunks is None
        )


NO_DELAY = DelayRule()


def delay_for(rules: list[DelayRule], arm: str | None, purpose: str, route: str) -> DelayRule:
    for rule in rules:
        if rule.matches(arm, purpose, route):
            return rule
    return NO_DELAY
