"""What live mode holds: its configuration (`LiveConfig`, one per proxy) and one call's metering
state (`LiveCall`, on the call's `CallState.live` while it is in flight)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ledger.budget import Reservation, RunBudget
from ledger.prices import ModelPrice, PriceTable
from ledger.settlements import SettlementWriter
from proxy.metering import StreamMeter, ToolPlan
from proxy.redact import StreamCleaner
from rundir.calls import ReservationJournal
from vendors.hosts import Vendor
from vendors.pins import Pins

KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "cohere": "CO_API_KEY",
    "voyage": "VOYAGE_API_KEY",
}


@dataclass
class LiveConfig:
    run_id: str
    upstreams: dict[Vendor, str]
    keys: dict[Vendor, str]
    prices: PriceTable
    budget: RunBudget
    journal: ReservationJournal
    writer: SettlementWriter | None
    pins: Pins = field(default_factory=Pins)
    deadline_s: float = 60.0


@dataclass
class LiveCall:
    model: str = ""
    price: ModelPrice | None = None
    reservation: Reservation | None = None
    unjournaled: bool = False  # reserved, its journal line not yet written (MeteredForwarder)
    max_output: int = 0
    tools: ToolPlan = field(default_factory=ToolPlan)
    # Some input is not bounded by the request's bytes (proxy.metering.unbounded).
    unbounded: bool = False
    meter: StreamMeter | None = None
    hide_usage: bool = False
    timer: asyncio.TimerHandle | None = None
    # "deadline" | "upstream_cut" | "upstream_unreachable" | "client_disconnect" | "shutdown"
    cut: str | None = None
    settled: bool = False
    relayed: bytearray = field(default_factory=bytearray)
    chunks: list[int] = field(default_factory=list)
    cleaner: StreamCleaner | None = None  # the stream's decoder and key redactor
