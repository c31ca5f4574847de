"""The proxy's addons in mitmproxy's own test kit (`mitmproxy.test.taddons`), no process or socket.

`addon_context` loads the addons `python -m proxy` loads (proxy/__main__.py), in its order, into
`taddons.context()`, applies `harness_*` options through the options store (so each addon's
`configure` validates them as in a real proxy) and runs the `running` and `done` hooks around the
test. `AddonKit.call` builds a flow with `tflow`/`tutils.treq` and drives it through every hook of
every addon, as mitmproxy's proxy server would for a call on a reverse listener.

Each hook is invoked with `invoke_addon`, which raises, rather than `trigger_event`, which logs an
addon's exception and goes on: a bug in a hook must fail the test, not pass as a missing reply.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

with warnings.catch_warnings():
    # mitmproxy's master imports ldap3, which trips pyasn1's DeprecationWarning (an error here).
    warnings.simplefilter("ignore", DeprecationWarning)
    from mitmproxy import eventsequence, hooks, http
    from mitmproxy.proxy.mode_specs import ProxyMode
    from mitmproxy.test import taddons, tflow, tutils

from proxy.app.addons import harness_addons
from proxy.app.server import NOWHERE

HAIKU = "claude-haiku-4-5-20251001"


class AddonKit:
    def __init__(self, tctx: taddons.context, addons: list[Any], run_dir: Path) -> None:
        self.tctx = tctx
        self.addons = addons
        self.run_dir = run_dir

    async def hook(self, event: hooks.Hook) -> None:
        for addon in self.addons:
            await self.tctx.master.addons.invoke_addon(addon, event)

    def flow(
        self,
        path: str,
        body: bytes | dict[str, Any] | None = None,
        *,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        port: int = 0,
    ) -> http.HTTPFlow:
        """A flow as an arm's SDK sends it to the reverse listener on `port` (`/vendor/...`)."""
        raw = json.dumps(body).encode() if isinstance(body, dict) else (body or b"")
        fields = {"content-type": "application/json", "content-length": str(len(raw))}
        fields.update(headers or {})
        request = tutils.treq(
            method=method.encode(),
            host="127.0.0.1",
            port=port,
            path=path.encode(),
            headers=http.Headers([(k.encode(), v.encode()) for k, v in fields.items()]),
            content=raw,
        )
        flow = tflow.tflow(req=request)
        flow.client_conn.sockname = ("127.0.0.1", port)
        flow.client_conn.proxy_mode = ProxyMode.parse(f"reverse:{NOWHERE}@{port}")
        return flow

    async def send(self, flow: http.HTTPFlow, *, loop_turn: bool = True) -> http.HTTPFlow:
        """Every hook of the flow's life, in mitmproxy's order (`eventsequence.iterate`).

        A reply the addon hands to its stream server (a stream, a delay) re-targets the request
        at that server; it is fetched here as mitmproxy would fetch it from an upstream, so the
        flow ends with the bytes the arm would read."""
        for event in eventsequence.iterate(flow):
            await self.hook(event)
            if event.name == "request" and flow.response is None:
                flow.response = await _fetch_upstream(flow.request)
        # Then mitmproxy ends the flow and writes the reply's end (HttpStream.flow_done).
        flow.live = False
        # mitmproxy's loop turns after the flow's end is sent, before it reads another request:
        # the work a streamed reply left for then (proxy.flow.after_reply) runs here.
        # `loop_turn=False`
        # stops where mitmproxy writes the end.
        if loop_turn:
            await asyncio.sleep(0)
        return flow

    async def call(self, path: str, body: bytes | dict[str, Any] | None = None, **kw: Any) -> Any:
        """Send one call; returns (status, the JSON body parsed or the text, the flow)."""
        flow = await self.send(self.flow(path, body, **kw))
        assert flow.response is not None
        return flow.response.status_code, _decoded(flow.response), flow

    def calls(self) -> list[dict[str, Any]]:
        path = self.run_dir / "calls.jsonl"
        text = path.read_text() if path.exists() else ""
        return [json.loads(line) for line in text.splitlines()]


@asynccontextmanager
async def addon_context(run_dir: Path, **options: Any) -> AsyncIterator[AddonKit]:
    """The harness addons with `harness_run_dir=run_dir` and `options`, running until exit."""
    addons = harness_addons()
    with taddons.context(*addons) as tctx:
        tctx.options.update(harness_run_dir=str(run_dir), harness_run_id="inprocess", **options)
        kit = AddonKit(tctx, addons, run_dir)
        await kit.hook(hooks.RunningHook())
        try:
            yield kit
        finally:
            await kit.hook(hooks.DoneHook())


async def _fetch_upstream(request: http.Request) -> http.Response:
    async with httpx.AsyncClient() as client:
        reply = await client.request(
            request.method, request.url, headers=dict(request.headers), content=request.content
        )
    # httpx has read the body whole: the framing headers of the stream no longer apply.
    framing = ("transfer-encoding", "content-length")
    headers = [(k.encode(), v.encode()) for k, v in reply.headers.items() if k not in framing]
    return http.Response.make(reply.status_code, reply.content, headers)


def _decoded(response: http.Response) -> Any:
    text = response.get_text(strict=False) or ""
    if "json" in response.headers.get("content-type", ""):
        return json.loads(text)
    return text
