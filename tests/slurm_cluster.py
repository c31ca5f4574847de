"""A throwaway single-node Slurm for tests: munged, slurmctld and slurmd started from a config in
a fresh folder (their state, spool, logs and munge socket there too), on free ports, stopped by
their pid files at the end.

Debian's `slurm-wlm` (installed by .ci/run) brings the daemons and munge with its key
(/etc/munge/munge.key). The daemons run as root, as the tests do. Without the package the tests
skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mem_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024 // 2
    return 1024


class Slurm:
    def __init__(self) -> None:
        missing = [d for d in DAEMONS if not Path(d).exists()]
        if missing or os.geteuid() != 0:
            why = f"Slurm is not installed ({missing[0]})" if missing else "needs root"
            if os.environ.get("CI") == "true":
                pytest.fail(f"{why}: .ci/run installs Debian slurm-wlm")
            pytest.skip(why)
        self.root = Path(tempfile.mkdtemp(prefix="harness-slurm-"))
        self.root.chmod(0o755)  # munged runs as munge and keeps its socket in here
        munge = self.root / "munge"
        munge.mkdir()
        shutil.chown(munge, "munge", "munge")
        self.conf = self.root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self._pids = [munge / "munged.pid", self.root / "slurmctld.pid", self.root / "slurmd.pid"]
        host = socket.gethostname()
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=harnesstest",
                    f"SlurmctldHost={host}",
                    f"SlurmctldPort={_free_port()}",
                    f"SlurmdPort={_free_port()}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={munge / 'munge.socket'}",
                    f"StateSaveLocation={self.root / 'state'}",
                    f"SlurmdSpoolDir={self.root / 'spool'}",
                    f"SlurmctldPidFile={self._pids[1]}",
                    f"SlurmdPidFile={self._pids[2]}",
                    f"SlurmctldLogFile={self.root / 'slurmctld.log'}",
                    f"SlurmdLogFile={self.root / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "JobCompType=jobcomp/none",
                    "AccountingStorageType=accounting_storage/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "SwitchType=switch/none",
                    f"NodeName={host} CPUs={os.cpu_count() or 1} RealMemory={_mem_mb()} "
                    "State=UNKNOWN",
                    "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
                    "OverSubscribe=FORCE:4",
                    "",
                ]
            )
        )
        for folder in ("state", "spool"):
            (self.root / folder).mkdir()
        try:
            subprocess.run(
                ["runuser", "-u", "munge", "--", DAEMONS[0], f"--socket={munge / 'munge.socket'}",
                 f"--pid-file={self._pids[0]}", f"--log-file={munge / 'munged.log'}",
                 f"--seed-file={munge / 'seed'}", "--force"],
                check=True, capture_output=True, timeout=30,
            )  # fmt: skip
            subprocess.run([DAEMONS[1], "-f", str(self.conf), "-i"], check=True, timeout=30)
            subprocess.run([DAEMONS[2], "-f", str(self.conf)], check=True, timeout=30)
            self._wait_idle()
        except BaseException:
            self.stop()
            raise

    def _wait_idle(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True, text=True
            )
            if done.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        raise RuntimeError(f"slurmd never became idle: {self.log()}")

    def log(self) -> str:
        return "".join(p.read_text()[-2000:] for p in self.root.glob("*.log") if p.is_file())

    def sbatch(self, *args: str, cwd: Path, env: dict[str, str]) -> str:
        done = subprocess.run(
            ["sbatch", "--parsable", *args],
            env={**env, "SLURM_CONF": str(self.conf)},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().split(";")[0]

    def wait(self, job: str, timeout: float) -> None:
        """Until no task of `job` is pending or running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["squeue", "-h", "-j", job], env=self.env, capture_output=True, text=True
            )
            if done.returncode == 0 and not done.stdout.strip():
                return
            time.sleep(1)
        raise AssertionError(f"job {job} still queued or running after {timeout}s")

    def stop(self) -> None:
        for pid_file in reversed(self._pids):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        time.sleep(1)
        shutil.rmtree(self.root, ignore_errors=True)


def running_slurm() -> Iterator[Slurm]:
    slurm = Slurm()
    try:
        yield slurm
    finally:
        slurm.stop()
