"""The harness addon's configuration: its options declared (`load`) and applied (`configure`),
each checked as it arrives, and the run's mode started from them (record answers from the
stubs; replay loads an earlier run's call log; live sets up the ledger and the journal).

A mixin of proxy.app.addon.HarnessAddon, which owns the state it sets; kept apart so the addon
module holds the per-call hooks.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mitmproxy import ctx, exceptions
from mitmproxy.addonmanager import Loader

from proxy.app.options import (
    declare_options,
    live_keys,
    parse_arm_ports,
    parse_purposes,
    parse_upstreams,
    parse_usd,
)
from proxy.calllog import CallSink
from proxy.flow import ReuseBook, parse_reuse
from proxy.flow import install as install_framing
from proxy.modes import LiveMode, Mode, RecordMode, ReplayMode, ReplaySourceError, StreamServer
from rundir.calls import DEFAULT_BODY_MASKS
from rundir.control import MODES, PurposeRule
from stubs.rules import ReplyBook, StubContext, StubsFileError
from vendors.pins import Pins, load_pins

T = TypeVar("T")


class AddonConfig:
    """`load` and `configure` of HarnessAddon, over the state its `__init__` sets."""

    record: RecordMode
    mode: Mode
    sink: CallSink
    stream_server: StreamServer
    reuse: ReuseBook
    pins: Pins
    masks: tuple[str, ...]
    arm_ports: dict[int, str]
    purposes: list[PurposeRule]
    arm: str
    body_limit: int
    run_id: str
    stage: str

    def load(self, loader: Loader) -> None:
        # One option per field of proxy.app.options.ProxySettings, the model proxy.json holds; the
        # listeners' ports come from its ProxyFile (one per arm and listener kind).
        declare_options(loader)
        # Framing refusals (CL+TE, bad chunks, ...) as the vendor's error, logged:
        # proxy.flow.framing.
        install_framing()
        loader.add_option(
            "harness_arm_ports", Sequence[str], [], "PORT=ARM: calls on listener PORT are ARM's."
        )

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        # Its `choices` show in mitmproxy's help and console, but mitmproxy does not enforce them.
        if "harness_mode" in updated and opts.harness_mode not in MODES:
            raise exceptions.OptionsError(
                f"harness_mode {opts.harness_mode!r} is not available; use record, live or replay"
            )
        if "harness_stubs" in updated:
            try:
                path = Path(opts.harness_stubs) if opts.harness_stubs else None
                self.record.stub_context = StubContext(book=ReplyBook.load(path))
            except StubsFileError as e:
                raise exceptions.OptionsError(str(e)) from e
        if "harness_pins" in updated:
            try:
                self.pins = load_pins(Path(opts.harness_pins)) if opts.harness_pins else Pins()
            except (ValueError, OSError, tomllib.TOMLDecodeError) as e:
                raise exceptions.OptionsError(
                    f"cannot load pinned sampling from {opts.harness_pins}: {e}"
                ) from e
        if "harness_arm_ports" in updated:
            self.arm_ports = _valid(parse_arm_ports, opts.harness_arm_ports)
        if "harness_purposes" in updated:
            self.purposes = _valid(parse_purposes, opts.harness_purposes)
        if "harness_reuse" in updated:
            self.reuse.leader_of = _valid(parse_reuse, opts.harness_reuse)
        if "harness_masks" in updated:
            self.masks = (*DEFAULT_BODY_MASKS, *opts.harness_masks)
        if "harness_body_limit" in updated and opts.harness_body_limit <= 0:
            raise exceptions.OptionsError("harness_body_limit must be a positive number of bytes")
        self.arm, self.body_limit = opts.harness_arm, opts.harness_body_limit
        self.run_id = opts.harness_run_id
        self.stage = opts.harness_stage
        if "harness_deadline" in updated and opts.harness_deadline <= 0:
            raise exceptions.OptionsError("harness_deadline must be a positive number of seconds")
        if "harness_upstreams" in updated:
            self.upstreams()  # validates
        for money in ("harness_cap", "harness_stage_cap"):
            if money in updated and getattr(opts, money):
                _valid(parse_usd, money, getattr(opts, money))
        opened = False
        if "harness_run_dir" in updated and opts.harness_run_dir:
            run_dir = Path(opts.harness_run_dir)
            try:
                self.sink.open(run_dir)
            except OSError as e:
                raise exceptions.OptionsError(
                    f"cannot write to run directory {run_dir}: {e.strerror}"
                ) from e
            opened = True
        try:
            self._start_mode(opts)
        except exceptions.OptionsError:
            if opened:
                # Refused before serving anything: the call log just opened is closed, not
                # left to the garbage collector (its ResourceWarning then fails a later test).
                self.sink.close()
                self.sink = CallSink()
            raise

    def _start_mode(self, opts: Any) -> None:
        if opts.harness_mode == "replay" and self.mode.name != "replay":
            self.mode = self._start_replay()
        if opts.harness_mode == "live" and self.mode.name != "live" and opts.harness_run_dir:
            from proxy.live import LiveSetupError, start_live

            try:
                setup, live = start_live(opts, self.upstreams(), live_keys(), self.pins)
            except LiveSetupError as e:
                raise exceptions.OptionsError(str(e)) from e
            self.mode = LiveMode(live, setup, self.record)

    def _start_replay(self) -> ReplayMode:
        opts = ctx.options
        if not opts.harness_replay_from:
            raise exceptions.OptionsError("replay mode needs harness_replay_from (a run directory)")
        source = Path(opts.harness_replay_from)
        if opts.harness_run_dir and Path(opts.harness_run_dir).resolve() == source.resolve():
            # The replay's own calls would be appended to the log it is serving from.
            raise exceptions.OptionsError("a replay must write to another run directory")
        try:
            return ReplayMode.load(source, self.stream_server, opts.harness_replay_timing)
        except (ReplaySourceError, OSError) as e:
            raise exceptions.OptionsError(str(e)) from e

    def upstreams(self) -> dict[str, str]:
        return _valid(parse_upstreams, ctx.options.harness_upstreams)


def _valid(parse: Callable[..., T], *args: Any) -> T:
    """An option's parser, its ValueError as mitmproxy's OptionsError (the one-line refusal)."""
    try:
        return parse(*args)
    except ValueError as e:
        raise exceptions.OptionsError(str(e)) from e
