"""Live mode's durable side: price table, ledger reservation of the run, settlement writer,
reservation journal; and closing them so the run is settled in the ledger on exit."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import structlog

from ledger.budget import RunBudget
from ledger.errors import CapExceeded, LedgerError
from ledger.ledger import Ledger, where
from ledger.prices import PriceTable, load_prices
from ledger.settlements import SettlementWriter
from ledger.usd import parse_usd
from proxy.live.forwarder import LiveConfig, MeteredForwarder
from proxy.metering import preload
from proxy.redact import install_log_redaction, uninstall_log_redaction
from rundir.calls import ReservationJournal
from vendors.pins import Pins

log = structlog.get_logger("harness.proxy")

# The ledger's writer books settlements in batches: one fsynced, hash-chained entry per batch,
# built by its thread while it holds the GIL. At the writer's default of 20 ms a 32-client load
# made some 50 entries a second, and on a loaded machine the event loop waited on the GIL's
# handoffs to that thread: calls/s under `bench.live_bench --busy 2` went from 0.73-0.83x bare
# mitmdump's to 0.89x at 100 ms (same run, alternating; BENCHMARKS.md). Nothing is at risk
# meanwhile: a proxy that dies leaves its run open in the ledger, counted at its full
# reservation until `harness ledger settle` books it from the call log and reservation journal.
SETTLEMENT_BATCH_MS = 100


class LiveSetupError(Exception):
    """Live mode cannot start; the message says what to fix."""


@dataclass
class LiveSetup:
    run_id: str
    ledger: Ledger
    writer: SettlementWriter
    journal: ReservationJournal
    prices: PriceTable

    def close(self, live: MeteredForwarder) -> None:
        """Make every settlement durable, then settle the run (no call is in flight now)."""
        try:
            self.writer.close()
            self.ledger.settle_run(self.run_id, in_flight=len(live.inflight))
        except LedgerError as e:
            log.error(
                "the run could not be settled in the ledger",
                run=self.run_id,
                error=str(e),
                fix=f"harness ledger settle {self.run_id} --run-dir RUN_DIR",
            )
        finally:
            self.journal.close()
            self.ledger.close()
            # The log redaction is process-global; a proxy started again in this process (the
            # in-process tests) installs its own keys' redactor.
            uninstall_log_redaction(live.redactor)


def start_live(
    opts: Any, upstreams: dict[str, str], keys: dict[str, str], pins: Pins
) -> tuple[LiveSetup, MeteredForwarder]:
    """`pins`: the study's pinned sampling, loaded once by the addon's configure for every mode."""
    if not opts.harness_cap:
        raise LiveSetupError("live mode needs a cap: pass --cap USD")
    if not keys:
        raise LiveSetupError(
            "live mode found no vendor key in the proxy's environment: set ANTHROPIC_API_KEY "
            "and/or OPENAI_API_KEY for the proxy (arms only ever hold a placeholder)"
        )
    location = opts.harness_ledger_url or opts.harness_ledger
    if not location:
        raise LiveSetupError("live mode needs a ledger: pass --ledger FILE or a postgresql:// URL")
    # Both checked by the same reader as the options were set (proxy/app/configure.py).
    cap = parse_usd(opts.harness_cap, "harness_cap")
    stage_cap = (
        parse_usd(opts.harness_stage_cap, "harness_stage_cap") if opts.harness_stage_cap else cap
    )
    try:
        prices = load_prices(Path(opts.harness_prices) if opts.harness_prices else None)
    except (LedgerError, OSError) as e:
        raise LiveSetupError(f"cannot load the price table: {e}") from e
    run_id = opts.harness_run_id
    try:
        ledger = Ledger(location if opts.harness_ledger_url else Path(location))
    except (LedgerError, OSError) as e:
        raise LiveSetupError(f"cannot open the ledger {where(location)}: {e}") from e
    try:
        if opts.harness_stage not in ledger.state().stages:
            ledger.open_stage(opts.harness_stage, stage_cap)
        # A proxy started again for this run adopts its open reservation (no second entry),
        # its budget what the run's earlier proxy did not book.
        if ledger.reserve_run(run_id, cap, stage=opts.harness_stage, adopt=True) is None:
            booked = ledger.state().runs[run_id].calls_usd
            log.warning("adopted the run's open reservation", run=run_id, booked=str(booked))
            cap = max(cap - booked, Decimal(0))
    except CapExceeded as e:
        ledger.close()
        raise LiveSetupError(str(e)) from e
    except LedgerError as e:
        ledger.close()
        raise LiveSetupError(f"ledger {ledger.where}: {e}") from e
    # The tokenizer's vocabularies take about a second to load: do it now, not on the event loop
    # in the middle of the first cut call.
    preload()
    writer = SettlementWriter(ledger, max_delay_ms=SETTLEMENT_BATCH_MS)
    journal = ReservationJournal(Path(opts.harness_run_dir))
    config = LiveConfig(
        run_id=run_id,
        upstreams=upstreams,  # type: ignore[arg-type]
        keys=keys,  # type: ignore[arg-type]
        prices=prices,
        budget=RunBudget(cap),
        journal=journal,
        writer=writer,
        pins=pins,
        deadline_s=opts.harness_deadline,
    )
    live = MeteredForwarder(config)
    # The keys are in this process: no log line of it may carry one.
    install_log_redaction(live.redactor)
    if live.redactor.skipped:
        log.warning(
            "a vendor key is too short to be real; it is not redacted from replies",
            variables=live.redactor.skipped,
        )
    return LiveSetup(run_id, ledger, writer, journal, prices), live
