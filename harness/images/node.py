"""What Node.js arms need, made on the host so no image build reaches a registry.

- Node.js itself: Debian trixie's packages pinned in images/node/debs.txt (nodejs 20 and what the
  offline base lacks of its dependencies), fetched with `apt-get download` into
  `.cache/node-debs/`. The host's apt knows its own release's package lists (bookworm here), not
  the images' suite, so apt runs on a private state of its own (`.cache/apt-trixie/`: the lists
  of the suite and mirror the base image is built from), leaving the host's apt untouched.
- The npm packages of images/node/package-lock.json (the official `openai` SDK; TypeScript and
  Node's types to compile), installed with `npm ci` from the npm cache `.cache/npm/` (the first
  build fills it from the registry; later ones run offline: `--prefer-offline`).
- arms/node/*.ts compiled by that lock's `tsc` into `dist/`.

The result is one folder per inputs hash, `.cache/node/<hash>/` with `node_modules/` and
`dist/` side by side (so `require("openai")` from dist/ resolves without NODE_PATH), packed as
`harness-node.tar` for the image and used as is by the tests on the host.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tarfile
from pathlib import Path

from harness.errors import HarnessError
from harness.images.wheelhouse import Log

NODE_IMAGE_DIR = ("images", "node")
LOCK_FILES = ("package.json", "package-lock.json")


def _sources(root: Path) -> list[Path]:
    node = root.joinpath(*NODE_IMAGE_DIR)
    arms = root / "arms" / "node"
    return [
        *(node / name for name in (*LOCK_FILES, "debs.txt")),
        arms / "tsconfig.json",
        *sorted(arms.glob("*.ts")),
    ]


def node_inputs(root: Path) -> str:
    digest = hashlib.sha256()
    for path in _sources(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _run(cmd: list[str], what: str, cwd: Path | None = None, hint: str = "") -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    except FileNotFoundError as e:
        raise HarnessError(f"{what}: {cmd[0]} is not installed", hint=hint) from e
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise HarnessError(f"{what} failed ({' '.join(cmd[:3])} ...):\n{tail}", hint=hint)


def image_apt_source(root: Path) -> tuple[str, str]:
    """The Debian mirror and suite the offline base is built from (images/base/build-offline.sh
    says), so the image's Node.js packages come from the release the image runs."""
    script = root / "images" / "base" / "build-offline.sh"
    proc = subprocess.run(["bash", str(script), "--apt-source"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise HarnessError(f"{script} --apt-source failed: {proc.stderr.strip()}")
    mirror, suite = proc.stdout.split()
    return mirror, suite


def _private_apt(cache: Path, mirror: str, suite: str) -> list[str]:
    """apt-get options for an apt state of the images' suite alone, under `.cache/apt-<suite>/`:
    its own sources, lists, archives, preferences and an empty dpkg status (download needs
    no installed set, and the host's pins must not steer the choice)."""
    state = cache / f"apt-{suite}"
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "parts").mkdir(exist_ok=True)
    (state / "status").touch()
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    (state / "sources.list").write_text(f"deb [signed-by={keyring}] {mirror} {suite} main\n")
    options = {
        "Dir::Etc::SourceList": state / "sources.list",
        "Dir::Etc::SourceParts": state / "parts",
        "Dir::Etc::Preferences": state / "preferences",
        "Dir::Etc::PreferencesParts": state / "parts",
        "Dir::State": state,
        "Dir::State::Lists": state / "lists",
        "Dir::State::status": state / "status",
        "Dir::Cache": state,
        "Dir::Cache::Archives": state / "archives",
        "Debug::NoLocking": "1",  # the lock files are the host apt's; this state is ours
    }
    return [arg for key, value in options.items() for arg in ("-o", f"{key}={value}")]


def fetch_debs(root: Path, cache: Path, log: Log) -> list[Path]:
    """The pinned .deb files, downloaded once; a pin no longer listed is dropped."""
    pins = root.joinpath(*NODE_IMAGE_DIR, "debs.txt").read_text().split()
    folder = cache / "node-debs"
    folder.mkdir(parents=True, exist_ok=True)

    def file_of(pin: str) -> Path:
        # apt names a file package_version_arch.deb with the epoch's ':' as '%3a'.
        name, version = pin.split("=", 1)
        found = [
            p
            for p in folder.glob(f"{name}_*.deb")
            if p.name.split("_")[1] == version.replace(":", "%3a")
        ]
        return found[0] if found else folder / f"{name}_{version}.missing"

    missing = [pin for pin in pins if not file_of(pin).exists()]
    if missing:
        mirror, suite = image_apt_source(root)
        log(f"node: fetching {len(missing)} Debian {suite} packages (apt-get download)")
        apt = ["apt-get", *_private_apt(cache, mirror, suite)]
        hint = f"the Debian mirror must answer: the first build fetches {suite}'s lists"
        # Fresh lists every time something is missing: a pin newer than the cached lists
        # would otherwise fail as unknown.
        _run([*apt, "update", "-qq"], f"apt-get update ({suite})", hint=hint)
        _run([*apt, "download", *missing], "downloading Node.js's Debian packages", folder, hint)
    wanted = {file_of(pin) for pin in pins}
    for stale in set(folder.glob("*.deb")) - wanted:
        stale.unlink()
    return sorted(wanted)


def build_node(root: Path, cache: Path, log: Log) -> Path:
    """`.cache/node/<hash>/` with node_modules/ (production packages) and dist/ (compiled)."""
    out = cache / "node" / node_inputs(root)
    if (out / "dist" / "seam.js").exists() and (out / "node_modules").is_dir():
        log(f"node: packages and compiled arms up to date ({out.name})")
        return out
    if shutil.which("npm") is None:
        raise HarnessError("npm is not installed", hint="apt-get install npm (or Node.js with npm)")
    log(f"node: npm ci and tsc ({out.name})")
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in LOCK_FILES:
        shutil.copy2(root.joinpath(*NODE_IMAGE_DIR, name), staging / name)
    npm = ["npm", "--cache", str(cache / "npm"), "--no-audit", "--no-fund", "--prefer-offline"]
    _run([*npm, "ci"], "npm ci", cwd=staging, hint="the first build needs the npm registry")
    source = staging / "src"
    source.mkdir()
    for path in (root / "arms" / "node").iterdir():
        if path.suffix == ".ts" or path.name == "tsconfig.json":
            shutil.copy2(path, source / path.name)
    tsc = staging / "node_modules" / "typescript" / "bin" / "tsc"
    _run(["node", str(tsc), "-p", str(source), "--outDir", str(staging / "dist")], "tsc")
    # The compiler and type packages stay on the host: the image gets what the arms run on.
    _run([*npm, "prune", "--omit=dev"], "npm prune", cwd=staging)
    shutil.rmtree(source)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return out


def stage_node(root: Path, cache: Path, log: Log) -> list[Path]:
    """The node image's build-context files: the .deb files and harness-node.tar."""
    debs = fetch_debs(root, cache, log)
    built = build_node(root, cache, log)
    tar = cache / "node" / f"harness-node-{built.name}.tar"
    if not tar.exists():
        tmp = tar.with_suffix(".tmp")
        with tarfile.open(tmp, "w") as pack:
            for name in ("node_modules", "dist", *LOCK_FILES):
                pack.add(built / name, arcname=name)
        tmp.rename(tar)
    staged = cache / "node" / "harness-node.tar"
    staged.unlink(missing_ok=True)
    staged.hardlink_to(tar)
    return [*debs, staged]
