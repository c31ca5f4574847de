"""The local proxy's process, confined so that it cannot undo its own rule (proxy_rule.py).

The rule matches the proxy's packets by its cgroup, and a process that can write a cgroup's
`cgroup.procs` or the firewall can leave it or change it. The proxy is a child of the harness,
which runs as root for the rule; before it execs, the child (`preexec`, in this order):

1. joins the proxy's cgroup (so not one packet leaves from outside it);
2. moves into a mount namespace of its own (private, so nothing propagates back to the host)
   and unmounts every cgroup filesystem there: as uid 0 it would pass the files' permission
   checks, so the files themselves are taken out of its reach;
3. sets NoNewPrivs and drops every capability (bounding set, ambient, effective, permitted and
   inheritable), so no exec gives any back: without CAP_SYS_ADMIN it cannot mount a cgroup
   filesystem again nor enter another namespace, without CAP_NET_ADMIN it cannot touch the
   firewall, without CAP_SYS_PTRACE it cannot reach another process's root (`/proc/PID/root`).

What is not enforced (said in run.json's `proxy_rule`): it keeps uid 0 (a user of its own would
need the run directory, the CA store and a file ledger made writable for it), so it can still
write what root's file permissions allow; no seccomp filter.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_LAST = 63  # past the kernel's last capability: PR_CAPBSET_DROP refuses the unknown ones
LINUX_CAPABILITY_VERSION_3 = 0x20080522
NOT_ENFORCED = "it keeps uid 0 (no user of its own) and has no seccomp filter"


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def cgroup_mounts(mounts: Path = Path("/proc/self/mounts")) -> list[str]:
    """Every cgroup (v1) and cgroup2 mount point, deepest first."""
    found = []
    with suppress(OSError):
        for line in mounts.read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] in ("cgroup", "cgroup2"):
                found.append(fields[1].replace("\\040", " "))
    return sorted(found, key=lambda p: p.count("/"), reverse=True)


def preexec(procs: str) -> Callable[[], None]:
    """The function Popen runs in the proxy's child: everything computed here, in the parent,
    so the child only makes system calls. Any failure raises, and Popen fails: the proxy never
    starts half-confined."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    mounts = [os.fsencode(p) for p in cgroup_mounts()]
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()

    def check(result: int, what: str) -> None:
        if result != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")

    def confine() -> None:
        with open(procs, "w") as f:
            f.write("0")
        check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate")
        for point in mounts:
            check(libc.umount2(point, MNT_DETACH), f"umount {os.fsdecode(point)}")
        check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
        for cap in range(CAP_LAST + 1):
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last one: ignored
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # old kernels: none
        check(libc.capset(ctypes.byref(header), data), "capset")

    return confine
