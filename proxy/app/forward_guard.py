"""Only vendor hosts through the forward-proxy listeners; anything else refused and named.

Arms get HTTPS_PROXY pointing at a regular-mode listener (harness/isolation/proxy_ca.py) so engines
that hard-code vendor hosts still reach the stubs or the meter. That listener must not become a way
out: a CONNECT (or an absolute-form request) for any host that is not a known vendor API is
refused with 403 before a byte leaves, and written to the egress log like the socket guard's and
the kernel's refusals, so the run is marked as having a stray connection. Without this, the
addon's vendor detection would file an unknown host under OpenAI (and, in live mode, forward it
with the study's key).

Reverse-mode listeners (base URLs) are untouched: their target is fixed by the harness.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import structlog
from mitmproxy import ctx, http
from mitmproxy.proxy.mode_specs import RegularMode

from vendors.hosts import VENDOR_HOSTS

log = structlog.get_logger("harness.proxy.forward_guard")


class VendorHostsOnly:
    def load(self, loader: object) -> None:
        loader.add_option(  # type: ignore[attr-defined]
            "harness_egress_log",
            str,
            "",
            "JSONL file where refused forward-proxy destinations are appended ('' = none).",
        )

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self._check(flow)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # A plain-HTTP request sent in absolute form ("GET http://host/..."): same rule.
        if flow.request.method != "CONNECT":
            self._check(flow)

    def _check(self, flow: http.HTTPFlow) -> None:
        if not isinstance(flow.client_conn.proxy_mode, RegularMode) or flow.response:
            return
        host = flow.request.host.lower()
        if host in VENDOR_HOSTS:
            return
        destination = f"{host}:{flow.request.port}"
        arm = self._arm(flow)
        flow.response = http.Response.make(
            403,
            f"harness proxy: {destination} is not a vendor API; arms reach vendors only\n",
            {"content-type": "text/plain"},
        )
        log.warning("refused a forward-proxy destination", arm=arm, destination=destination)
        self._record(arm, destination)

    def _arm(self, flow: http.HTTPFlow) -> str:
        port = flow.client_conn.sockname[1] if flow.client_conn.sockname else 0
        ports = ctx.options.harness_arm_ports
        for spec in ports:
            listener, _, arm = spec.partition("=")
            if listener == str(port):
                return arm
        return str(ctx.options.harness_arm)

    def _record(self, arm: str, destination: str) -> None:
        path = ctx.options.harness_egress_log
        if not path:
            return
        line = json.dumps(
            {
                "schema": 1,
                "arm": arm,
                "destination": destination,
                "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "source": "proxy",
            }
        )
        # One O_APPEND write per line (the local backend's guards append to the same file), then
        # fsync: a refusal is evidence against the run and must survive a crash.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
