"""The box a command judge runs in: what it may see of this machine while it answers.

A judge that can read the set it judges can steer it: tasks.jsonl says which prompts are
controls and what they must get, the seal says which arm each code stands for, the runs hold the
replies by arm. So a command judge runs:
- in an empty private working directory holding only its prompt (prompt.txt), the prompt also on
  its stdin;
- with an environment of only PATH, HOME and TMPDIR (both the private directory), LANG, and the
  variables its judges.toml entry names in `env` (a CLI's key, say; HOME named there gives the
  real home, where a CLI keeps its login): not the harness's own;
- where Linux namespaces are available (`unshare`: a user, mount and PID namespace), with the
  set, the seal and the runs hidden (an empty directory mounted over each folder, an empty file
  over each file) and no view of the harness's processes (their command lines and environments);
  elsewhere with only the two above, which the set then says (`JudgePin.box`).
Its network is left alone: a command-line client reaches its vendor.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path

# What any program needs to start (a locale, a home it may write to); nothing of the harness's.
BASE_ENV = ("PATH", "HOME", "TMPDIR", "LANG")
UNSHARE = ("unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc")


class BoxError(Exception):
    """The box cannot be built for this call (a variable the judge needs is unset)."""


def judge_env(private: Path, names: list[str]) -> dict[str, str]:
    """The judge's whole environment: the minimum to start, and the variables it is given."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(private),
        "TMPDIR": str(private),
        "LANG": "C.UTF-8",
    }
    for name in names:
        value = os.environ.get(name)
        if value is None:
            raise BoxError(f"${name} (named in the judge's env) is not set")
        env[name] = value
    return env


@cache
def namespaces_unavailable() -> str | None:
    """Why the namespaces cannot be used here (None: they can): probed once by a real start."""
    if shutil.which("unshare") is None:
        return "no unshare command (util-linux)"
    try:
        probe = subprocess.run(
            [*UNSHARE, "--kill-child", "sh", "-c", "mount -t tmpfs none /mnt"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare did not start: {e}"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return f"unshare cannot make a user, mount and PID namespace here: {said[0][:160]}"
    return None


def _mask(path: Path) -> str:
    # An empty read-only tmpfs over a folder; /dev/null (empty) over a file.
    where = shlex.quote(str(path))
    if path.is_dir():
        return f"mount -t tmpfs -o ro,size=4k,mode=0555 none {where}"
    return f"mount --bind /dev/null {where}"


def boxed_argv(argv: list[str], hidden: tuple[Path, ...]) -> list[str]:
    """`argv` run in new namespaces with `hidden` masked; `argv` alone without namespaces."""
    if namespaces_unavailable() is not None:
        return argv
    masks = [_mask(p) for p in sorted({p.resolve() for p in hidden}) if p.exists()]
    # A mask that fails leaves the judge seeing the set: fail closed (set -e), never run it.
    script = "set -e; " + "".join(f"{m}; " for m in masks) + 'exec "$@"'
    return [*UNSHARE, "--kill-child", "sh", "-c", script, "judge", *argv]


def described(names: list[str], hidden: tuple[Path, ...]) -> list[str]:
    """What the box enforces, for the judgment set (`JudgePin.box`)."""
    given = ", ".join(names) if names else "none"
    said = [
        "an empty private working directory holding only its prompt (also on stdin)",
        f"environment: {', '.join(BASE_ENV)} and the named variables ({given}) only",
    ]
    why = namespaces_unavailable()
    if why is None:
        said.append(
            f"user, mount and PID namespaces: {len(hidden)} path(s) hidden (the set, the seal, "
            "the runs), the harness's processes out of sight"
        )
    else:
        said.append(f"not enforced: no read barrier to the set, seal and runs ({why})")
    return said
