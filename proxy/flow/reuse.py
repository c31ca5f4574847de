"""Reuse hits (issue 25 item 3), in every mode: a main request of a follower arm that equals,
masked, its leader's main request of the same item and turn is answered with the leader's reply.

The study names the pairs (`[coupling] reuse = [["C0", "C1"]]`, proxy.json's `reuse` as
LEADER=FOLLOWER); the coupled order runs the leader's turn before the follower's, so the leader's
reply is here when the follower asks. The follower's call is logged with `reuse_of` (the
leader's call seq) and books nothing: no reservation, no vendor call, cost 0; the report's cost
section counts the hits and the dollars the leader's calls cost (saved).

Only complete, successful (200) leader replies are kept, one per (leader, item, turn, request
hash), as the arm received them (live: after key redaction); a second equal leader request in
the turn replaces the first. The book is kept per leader instance (`C0`, or worker k's `C0@k`):
an instance's replies are dropped only when that instance starts another item, which it does
only once every arm of its worker has finished the item (an item runs on one worker, turn by
turn), so no worker evicts a turn another worker still runs, and an arm restarted mid-item and
running its earlier turns again is still served.

A reused reply carries its leader's identity checks: the follower's call is flagged as the
leader's was (`wrong_model`), so the follower's turn fails as the leader's did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from proxy.flow.callstate import CallState
from vendors.pins import WRONG_MODEL_FLAG
from vendors.reply import VendorReply

MAIN = "main"
# The leader's flags a reused reply brings to the follower's call: what the reply itself is.
CARRIED_FLAGS = (WRONG_MODEL_FLAG,)


def parse_reuse(entries: Sequence[str]) -> dict[str, str]:
    """`harness_reuse` (LEADER=FOLLOWER each) as follower -> leader; ValueError naming a bad one."""
    pairs: dict[str, str] = {}
    for entry in entries:
        leader, sep, follower = entry.partition("=")
        if not sep or not leader or not follower or leader == follower:
            raise ValueError(f"harness_reuse entry {entry!r} must look like C0=C1 (two arms)")
        if follower in pairs:
            raise ValueError(f"harness_reuse: arm {follower!r} follows two leaders")
        pairs[follower] = leader
    return pairs


@dataclass(frozen=True)
class Kept:
    seq: int
    reply: VendorReply
    flags: tuple[str, ...] = ()  # the leader's CARRIED_FLAGS


class ReuseBook:
    def __init__(self) -> None:
        self.leader_of: dict[str, str] = {}
        self._kept: dict[tuple[str, str, int, str], Kept] = {}
        self._item_of: dict[str, str] = {}  # leader instance -> the item its replies are of

    @property
    def leaders(self) -> set[str]:
        return set(self.leader_of.values())

    def _key(self, arm: str, state: CallState) -> tuple[str, str, int, str] | None:
        ref = state.turn
        if ref is None or state.purpose != MAIN or not state.request_hash:
            return None
        return (arm, ref.item, ref.turn, state.request_hash)

    def remember(self, state: CallState, reply: VendorReply | None) -> None:
        """Keep a leader's complete main reply for its followers of the same turn."""
        if reply is None or reply.status != 200 or state.arm not in self.leaders:
            return
        if not reply.body:
            return  # nothing was relayed: nothing the follower could be given
        if state.outcome != "ok" or state.reuse_of is not None:
            return
        key = self._key(state.arm, state)
        if key is None:
            return
        instance = state.instance or state.arm
        item = key[1]
        before = self._item_of.get(instance)
        if before != item:
            # This instance moved on to another item: its worker has finished the last one in
            # every arm, so nothing can ask for those replies again. Items are unique to one
            # worker, so (arm, item) names this instance's entries alone.
            if before is not None:
                self._kept = {
                    k: v for k, v in self._kept.items() if (k[0], k[1]) != (state.arm, before)
                }
            self._item_of[instance] = item
        carried = tuple(flag for flag in state.flags if flag in CARRIED_FLAGS)
        self._kept[key] = Kept(state.seq, reply, carried)

    def lookup(self, state: CallState) -> Kept | None:
        """The leader's reply this follower's main request equals (masked), else None."""
        leader = self.leader_of.get(state.arm)
        if leader is None:
            return None
        key = self._key(leader, state)
        return self._kept.get(key) if key is not None else None


def reply_as_sent(state: CallState, content_type: str | None) -> VendorReply | None:
    """A forwarded (live) call's reply as the arm received it, for reuse: the relayed body cut
    at the chunk sizes it was read in."""
    body = state.response_body
    if body is None:
        return None
    chunks: list[bytes] = []
    at = 0
    for size in state.response_chunks or [len(body)]:
        chunks.append(body[at : at + size])
        at += size
    if at < len(body):
        chunks.append(body[at:])
    return VendorReply(
        status=200,
        chunks=chunks or [b""],
        content_type=content_type or "application/json",
        stream=state.stream,
        model=state.model_served,
    )
