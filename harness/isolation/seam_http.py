"""The harness's seam client without TLS machinery: the seam is plain HTTP to a local process or
a container on the run's own network, never TLS.

`arms.client.SeamClient` gets an `httpx.AsyncClient` whose default transport builds an SSL
context with certifi's store (about 25 ms of CPU per client: 7% of the harness's own CPU on a
T1 item, where every arm start and restart makes a client; issue 37). Here the transport gets
one TLS context made once and never used, so a client costs about 0.03 ms. The backends (their
health check) and the orchestrator build theirs with `seam_client`.
"""

from __future__ import annotations

import ssl

import httpx

from arms.client import SeamClient

# Never used for a handshake: a bare client context (no CA store loaded) so that httpx does not
# build one per client. An https:// seam (none is) gets SeamClient's own client.
_NO_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class PlainSeamClient(SeamClient):
    """`SeamClient` for an `http://` seam: the same requests, a transport with no TLS setup."""

    def __init__(self, base_url: str, *, timeout: float = 30.0) -> None:
        if not base_url.startswith("http://"):
            raise ValueError(f"the seam is plain HTTP, not {base_url!r}")
        # trust_env=False as SeamClient: no HTTP(S)_PROXY may carry orchestrator requests.
        transport = httpx.AsyncHTTPTransport(verify=_NO_TLS, trust_env=False)
        self.http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), timeout=timeout, trust_env=False, transport=transport
        )


def seam_client(url: str, *, timeout: float = 30.0) -> SeamClient:
    """A client for the arm's seam at `url`: without TLS machinery when it is plain HTTP."""
    if url.startswith("http://"):
        return PlainSeamClient(url, timeout=timeout)
    return SeamClient(url, timeout=timeout)
