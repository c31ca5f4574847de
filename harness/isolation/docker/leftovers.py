"""What a crashed docker run leaves on the host, and `harness cleanup`'s part for it
(DockerBackend.cleanup): containers and networks by their `harness.run` label, the firewall rules
of the docker chains by their comment, and the arms' bounded disks once no container uses them."""

from __future__ import annotations

import contextlib
from pathlib import Path

from harness.isolation.docker.arm_disk import release_left
from harness.isolation.docker.cli import DockerError, docker, engine_answers
from harness.isolation.owner import OWNER_LABEL, RUN_LABEL, OwnedRuns, remove_stale_rules


def _docker_chain(chain: str) -> bool:
    """The chains the docker backend's rules sit in (INPUT, DOCKER-USER, FORWARD): all but the
    local backend's OUTPUT."""
    return chain != "OUTPUT"


def cleanup(run_root: Path, runs: OwnedRuns, *, force: bool = False) -> list[str]:
    """Remove the containers, networks and iptables rules of the runs under `run_root` whose
    harness is gone (with `force`, also theirs while it runs; owner.OwnedRuns), then the disks
    under `run_root` no container uses any more. Other runs' are never touched."""
    done: list[str] = []
    if engine_answers():
        fmt = f'{{{{.ID}}}} {{{{.Label "{RUN_LABEL}"}}}} {{{{.Label "{OWNER_LABEL}"}}}}'
        for kind in ("container", "network"):
            every = ["-a"] if kind == "container" else []
            listing = docker(
                [kind, "ls", *every, "--filter", f"label={RUN_LABEL}", "--format", fmt]
            )
            # Containers first (a network in use cannot be removed).
            for line in listing.splitlines():
                ident, run, who = [*line.split(), "", "", ""][:3]
                if run not in runs.ids:
                    continue  # another root's run (a shard on this node): never touched
                if not runs.removable(run, who, force):
                    done.append(f"{run}: still running ({kind} {ident} kept)")
                    continue
                remove = ["rm", "-f", ident] if kind == "container" else ["rm", ident]
                with contextlib.suppress(DockerError):
                    docker([kind, *remove], timeout=60)
                    done.append(f"{run}: removed {kind} {ident}")
    # The rules go once the containers they confine are gone, never before.
    done += remove_stale_rules(runs, force, chain=_docker_chain)
    # Then the arms' bounded disks those runs left mounted (copied out into the run first).
    done += release_left(run_root)
    return done
