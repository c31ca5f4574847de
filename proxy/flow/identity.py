"""Model identity in record mode (issue 36 item 4): the study's `[pins.models]` checked before any
money is spent. A record-mode reply names the model the arm asked for (the stubs answer as that
model), so a main call asking for a model other than its purpose's pin is flagged `wrong_model`
exactly as the live proxy flags a reply served by another model (proxy/live/settle.py), and its
turn fails the same way (harness/run/watch/model_identity.py): a study whose arms ask for the wrong
model fails its free record run rather than every turn of its paid one."""

from __future__ import annotations

from proxy.flow.callstate import CallState
from vendors.pins import WRONG_MODEL_FLAG, Pins, served_matches


def flag_unpinned_model(state: CallState, pins: Pins, status: int) -> None:
    """Flag a locally answered 200 whose reply names a model other than its purpose's pin."""
    pinned = pins.pinned_model(state.purpose)
    if pinned is None or status != 200 or state.reuse_of is not None:
        return  # a reuse hit carries its leader's flags (proxy/flow/reuse.py)
    served = state.reply.model if state.reply is not None else state.model_served
    if not served_matches(pinned, served) and WRONG_MODEL_FLAG not in state.flags:
        state.flags.append(WRONG_MODEL_FLAG)
