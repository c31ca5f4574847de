"""Issue 4's figures: the quickstart's wall time per isolation backend, and how long an arm
container takes from `docker run` to answering `GET /health` on its seam.

    .venv/bin/python -m bench.study_bench [--rounds 2] [--write BENCHMARKS.md]

The quickstart is timed as a user waits for it: `harness record examples/quickstart/study.toml`
as a process, start to exit, every run required to pass. The docker figures need an engine and
the images (`scripts/ensure-docker`, `harness images build --offline`); without them the bench
says so and measures the local backend only. Arm containers are started with their seam port
published on 127.0.0.1 only and removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
SECTION = "Studies: quickstart wall time and arm start-up"
HARNESS = [sys.executable, "-m", "harness.cli"]
ARMS = ("bare", "retrieval")


def _docker_ok() -> bool:
    if shutil.which("docker") is None:
        return False
    done = subprocess.run(["docker", "image", "inspect", "harness-arm"], capture_output=True)
    return done.returncode == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_quickstart(isolation: str, rounds: int) -> list[float]:
    times = []
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1"}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="study-bench-") as tmp:
            start = time.monotonic()
            done = subprocess.run(
                [
                    *HARNESS,
                    "record",
                    str(REPO / "examples/quickstart/study.toml"),
                    "--run-dir",
                    tmp,
                    "--isolation",
                    isolation,
                ],
                capture_output=True,
                text=True,
                env=env,
                cwd=REPO,
                timeout=600,
            )
            elapsed = time.monotonic() - start
        if done.returncode != 0:
            raise SystemExit(f"quickstart ({isolation}) failed:\n{done.stderr[-2000:]}")
        times.append(elapsed)
    return times


def time_arm_start(arm: str, rounds: int) -> list[float]:
    """`docker run` to the seam's first healthy answer, for one reference arm."""
    times = []
    for _ in range(rounds):
        port = _free_port()
        name = f"harness-bench-{arm}-{port}"
        start = time.monotonic()
        subprocess.run(
            [
                "docker",
                "run",
                "-d",
                "--rm",
                "--name",
                name,
                "-p",
                f"127.0.0.1:{port}:8700",
                "-e",
                "SEAM_HOST=0.0.0.0",
                "-e",
                "SEAM_PORT=8700",
                "-e",
                "OPENAI_BASE_URL=http://127.0.0.1:9/v1",
                "-e",
                "OPENAI_API_KEY=placeholder",
                "harness-arm",
                "python",
                "-m",
                f"arms.{arm}",
            ],
            check=True,
            capture_output=True,
        )
        try:
            deadline = start + 120
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
            else:
                raise SystemExit(f"arm {arm} did not become healthy in 120 s")
            times.append(time.monotonic() - start)
        finally:
            subprocess.run(["docker", "rm", "-f", name], capture_output=True)
    return times


def _fmt(times: list[float]) -> str:
    return f"{statistics.median(times):.1f} s (n={len(times)}, max {max(times):.1f} s)"


def render(local: list[float], docker: list[float] | None, arms: dict[str, list[float]]) -> str:
    load = os.getloadavg()[0]
    lines = [
        f"## {SECTION}\n",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {load:.2f} (other work shares this "
        "machine). Repeat from the repository root with:\n",
        "```sh\n.venv/bin/python -m bench.study_bench --write BENCHMARKS.md\n```\n",
        "| figure | median | target |",
        "|---|---:|---|",
        f"| quickstart, `harness record`, local isolation | {_fmt(local)} | < 120 s |",
    ]
    if docker is not None:
        lines.append(
            f"| quickstart, `harness record`, docker isolation | {_fmt(docker)} | < 120 s |"
        )
    else:
        lines.append("| quickstart, docker isolation | not measured: no engine or images | |")
    for arm, times in arms.items():
        lines.append(f"| arm container `{arm}`: `docker run` to healthy seam | {_fmt(times)} | |")
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace this bench's section of `path`, or append it; other sections stay."""
    replace_section(path, SECTION, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    args = parser.parse_args()
    local = time_quickstart("local", args.rounds)
    docker = None
    arms: dict[str, list[float]] = {}
    if _docker_ok():
        arms = {arm: time_arm_start(arm, args.rounds) for arm in ARMS}
        done = subprocess.run([*HARNESS, "record", "--help"], capture_output=True, text=True)
        if "docker" in done.stdout:
            try:
                docker = time_quickstart("docker", args.rounds)
            except SystemExit as e:
                print(f"docker quickstart not measured: {e}", file=sys.stderr)
    section = render(local, docker, arms)
    print(section)
    if args.write:
        write_section(args.write, section)


if __name__ == "__main__":
    main()
