"""The check that the proxy's own rule holds (proxy_rules.py), made at start before run.json may
say "enforced": from where the proxy's packets leave (its cgroup on the local backend, with the
same confinement the proxy gets), a probe tries what the rule forbids:

- TCP, and a well-formed DNS query over UDP, to port 53 of an address that is no resolver,
  where the harness itself listens (so a packet that got through would be seen arriving);
- a datagram that is no DNS query to each resolver's port 53 (the kernel refuses it as it
  leaves: the send fails, where an allowed one succeeds).

Anything that gets through makes the start fail (fail closed): the rule is not what it says. The
probe's refused packets are logged like any other; the caller counts them apart (probe_lines),
so they never pass for the proxy's. On the docker backend the probe is a container on the
proxy's network, to the host's address there (no resolvers: the docker proxy has no DNS).
"""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator

from harness.isolation import proxy_rules
from harness.isolation.kernel_log import KernelLog
from harness.isolation.proxy_dns import DNS_PORT

TIMEOUT_S = 30.0
ATTEMPTS = 20  # addresses tried for the probe's server
DRAINS = 5  # times the kernel log is drained for the probe's lines (each up to 3 s)
# A DNS query for `probe.invalid` A IN (ID 0x4850, RD): what the rule lets through to a resolver.
QUERY = bytes.fromhex("485001000001000000000000") + b"\x05probe\x07invalid\x00\x00\x01\x00\x01"
NOT_DNS = b"harness probe: this datagram is not a DNS query"
SCRIPT = """
import socket, sys
address, query, not_dns = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3])
def report(what, act):
    try:
        act()
        print(what, "sent", flush=True)
    except OSError as e:
        print(what, type(e).__name__, flush=True)
report("tcp", lambda: socket.create_connection((address, 53), timeout=3).close())
def udp(to, data):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(data, (to, 53))
report("udp", lambda: udp(address, query))
for resolver in sys.argv[4:]:
    report("resolver " + resolver, lambda: udp(resolver, not_dns))
"""


class Listener:
    """TCP and UDP on port 53 of `address`: what the probe must never reach."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.tcp = socket.create_server((address, DNS_PORT))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.udp.bind((address, DNS_PORT))
        except OSError:
            self.close()
            raise
        for sock in (self.tcp, self.udp):
            sock.setblocking(False)

    def reached(self) -> list[str]:
        """What arrived (on loopback a packet the kernel let out is queued by the time the
        probe's send returned, so looking once after the probe has exited is enough)."""
        seen: list[str] = []
        try:
            self.tcp.accept()[0].close()
            seen.append("tcp")
        except BlockingIOError:
            pass
        try:
            self.udp.recvfrom(4096)
            seen.append("udp")
        except BlockingIOError:
            pass
        return seen

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


def listen(addresses: Iterator[str]) -> Listener:
    """A Listener on the first of `addresses` whose port 53 is free (another run's probe may
    hold one)."""
    for attempt in range(ATTEMPTS):
        try:
            return Listener(next(addresses))
        except OSError as e:
            if e.errno != errno.EADDRINUSE or attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def probe_local(
    preexec: Callable[[], None], addresses: Iterator[str], resolvers: tuple[str, ...]
) -> tuple[list[str], str]:
    """Run the probe in a child that `preexec` puts where the proxy runs, against port 53 of
    the first free of `addresses`. Returns (what got through, the probe's own output)."""
    listener = listen(addresses)
    argv = [sys.executable, "-c", SCRIPT, listener.address, QUERY.hex(), NOT_DNS.hex()]
    return _probe([*argv, *resolvers], listener, listener.address, resolvers, preexec)


def probe_docker(docker_run: list[str], gateway: str) -> tuple[list[str], str]:
    """Run the probe in a container on the proxy's network (`docker_run`: `docker run` up to
    an image whose entrypoint is python), against port 53 of the host's address there. Where
    something else holds that port, the probe's own report of its TCP connection is what
    shows a hole."""
    try:
        listener: Listener | None = Listener(gateway)
    except OSError:
        listener = None
    argv = [*docker_run, "-c", SCRIPT, gateway, QUERY.hex(), NOT_DNS.hex()]
    return _probe(argv, listener, gateway, (), None)


def _probe(
    argv: list[str],
    listener: Listener | None,
    address: str,
    resolvers: tuple[str, ...],
    preexec: Callable[[], None] | None,
) -> tuple[list[str], str]:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=preexec, check=False
        )
        reached = listener.reached() if listener is not None else []
    finally:
        if listener is not None:
            listener.close()
    through = [f"{kind} to {address}:{DNS_PORT}" for kind in reached]
    said = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines() if " " in line)
    if said.get("tcp") == "sent" and "tcp" not in reached:
        through.append(f"tcp to {address}:{DNS_PORT} (connected)")
    for resolver in resolvers:
        if said.get(f"resolver {resolver}", "sent") == "sent":  # not refused, or never tried
            through.append(f"a datagram that is no DNS query to {resolver}:{DNS_PORT}")
    if done.returncode != 0:
        through.append(f"(the probe exited {done.returncode}: {done.stderr.strip()[-300:]})")
    return through, done.stdout


def probe_lines(kernel: KernelLog, run_id: str) -> int:
    """The kernel-log lines of the run's proxy rules once the follower has caught up with the
    rules' own counters: the probe's, as nothing else of the proxy's has run yet. Bounded: what
    is still missing then counts as lost (failing the run), never as hidden."""
    logged = 0
    for _ in range(DRAINS):
        kernel.drain()
        logged = len(proxy_rules.refusals(run_id, kernel.path))
        if proxy_rules.uncounted(run_id, logged) == 0:
            break
    return logged
