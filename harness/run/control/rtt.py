"""Round-trip probes: the floor the report takes off each turn's and each call's latency.

The seam: N `GET /health` on ONE keep-alive connection (httpx with a single connection), after
a warm-up that opens it, timed with perf_counter; the minimum and the median are kept. The
warm-up keeps TCP setup (and the arm's first-request costs) out of the samples, so what is left
is the round trip plus the arm server's cheapest reply.

A vendor's upstream (live mode): timed TCP handshakes from the host to the vendor's host and
port. A handshake is one round trip answered by the vendor's kernel, with no request sent: the
vendor sees no call and bills nothing, and a fake vendor in a test counts no request. It is the
proxy's next hop in local isolation; in docker isolation the proxy's container reaches the
vendor through this same host, so the figure is the same path less the container bridge.
The proxy itself could time the handshake of each upstream connection it opens (mitmproxy's
`server_conn.timestamp_tcp_setup - timestamp_start`), but that is one sample per new
connection, mid-run, and the call log has no field for it yet.
"""

from __future__ import annotations

import asyncio
import ssl
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from rundir.errors import RunDirError
from rundir.network import ProbeKind, ProbeMethod, ProbePhase, RttLog, RttProbe
from rundir.runs import read_header

SEAM_SAMPLES = 20
SEAM_WARMUP = 2
UPSTREAM_SAMPLES = 10
PROBE_TIMEOUT_S = 5.0
# The seam is plain HTTP: a bare client context, never used for a handshake, spares httpx
# building one with certifi's store per probe (~25 ms of CPU, more than the probe measures), as
# the seam's clients do (harness/isolation/seam_http.py).
_NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _probe(
    run: str,
    kind: ProbeKind,
    target: str,
    phase: ProbePhase,
    began: str,
    taken: list[float],
    *,
    warmup: int = 0,
    error: str | None = None,
) -> RttProbe:
    method: ProbeMethod = "http_keepalive" if kind == "seam" else "tcp_connect"
    samples = [] if error else [round(s, 6) for s in taken]
    return RttProbe(
        run=run,
        kind=kind,
        target=target,
        phase=phase,
        method=method,
        time=began,
        warmup=warmup,
        samples_s=samples,
        min_s=min(samples) if samples else None,
        median_s=statistics.median(samples) if samples else None,
        error=error,
    )


async def probe_seam(
    run: str,
    arm: str,
    seam_url: str,
    phase: ProbePhase,
    samples: int = SEAM_SAMPLES,
    warmup: int = SEAM_WARMUP,
) -> RttProbe:
    began, taken = _now(), list[float]()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    # trust_env=False: like the seam client, never through a proxy meant for vendor traffic.
    async with httpx.AsyncClient(
        base_url=seam_url,
        limits=limits,
        timeout=PROBE_TIMEOUT_S,
        trust_env=False,
        verify=_NO_TLS,
    ) as client:
        try:
            for _ in range(warmup):
                (await client.get("/health")).raise_for_status()
            for _ in range(samples):
                started = time.perf_counter()
                response = await client.get("/health")
                taken.append(time.perf_counter() - started)
                response.raise_for_status()
        except httpx.HTTPError as e:
            error = f"{type(e).__name__}: {e}"
            return _probe(run, "seam", arm, phase, began, taken, warmup=warmup, error=error)
    return _probe(run, "seam", arm, phase, began, taken, warmup=warmup)


async def probe_upstream(
    run: str, vendor: str, url: str, phase: ProbePhase, samples: int = UPSTREAM_SAMPLES
) -> RttProbe:
    began, taken = _now(), list[float]()
    parts = urlsplit(url)
    host = parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if not host:
        error = f"no host in the vendor URL of {vendor}"
        return _probe(run, "upstream", vendor, phase, began, taken, error=error)
    try:
        for _ in range(samples):
            started = time.perf_counter()
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), PROBE_TIMEOUT_S)
            taken.append(time.perf_counter() - started)
            writer.close()
            await writer.wait_closed()
    except (OSError, TimeoutError) as e:
        error = f"{type(e).__name__}: {e}"
        return _probe(run, "upstream", vendor, phase, began, taken, error=error)
    return _probe(run, "upstream", vendor, phase, began, taken)


def live_upstreams(run_dir: Path, vendors: dict[str, str]) -> dict[str, str]:
    """The vendors to probe: the study's, in live mode only (the run's header, written before
    any arm starts, says the mode). Record and replay reach no vendor."""
    try:
        mode = read_header(run_dir).mode
    except RunDirError:
        return {}
    return dict(vendors) if mode == "live" else {}


async def probe_all(
    log: RttLog, run: str, seams: dict[str, str], upstreams: dict[str, str], phase: ProbePhase
) -> None:
    """Probe every arm's seam and every live upstream, one at a time (probes taken together
    would time each other on a small machine), appending each to rtt.jsonl."""
    for arm, url in seams.items():
        log.append(await probe_seam(run, arm, url, phase))
    for vendor, url in upstreams.items():
        log.append(await probe_upstream(run, vendor, url, phase))
