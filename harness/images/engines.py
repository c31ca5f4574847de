"""The engine arms' images, built on request (`harness images build --engines`), offline.

- `harness-mem0`, `harness-graphiti`: one Dockerfile (images/engine/) built once per engine with
  its build arguments: FROM harness-arm, plus the engine's pinned wheels
  (images/engine/<engine>/requirements.in resolved on top of harness-python's pins, fetched once
  into `.cache/wheelhouse-<engine>/`), installed `--no-deps` into /opt/engine, which the venv reads
  through a .pth file: the image adds one small layer, and the harness's own pins are untouched.
- `harness-node`: FROM harness-arm, plus Debian trixie's Node.js 20 from .deb files fetched on
  the host (`apt-get download` on a private apt state, cached in `.cache/node-debs/`) and the npm
  packages of images/node/package-lock.json (`npm ci` on the host, cache in `.cache/npm/`), with
  the TypeScript seam helper and example arm (arms/node/) compiled by the lock's `tsc`.

Each is skipped when its `harness.inputs` label matches (its folder, its build arguments, its pins
or lock, the arm image's id), like the chain in harness/images/build.py; the default build does
not make them, so the tests and runs that need only the reference arms pay nothing for them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.errors import HarnessError
from harness.images.image import ARM, DockerCLI, ImageInfo, ImageSpec, build_one, folder_text
from harness.images.node import node_inputs, stage_node
from harness.images.wheelhouse import Log, fill_wheelhouse, lock_extra, sha256_text

ENGINE_FOLDER = "engine"  # images/engine/: the Dockerfile both engine images share
MEM0 = ImageSpec("mem0", "harness-mem0", folder=ENGINE_FOLDER)
GRAPHITI = ImageSpec("graphiti", "harness-graphiti", folder=ENGINE_FOLDER)
# Per engine, what the shared Dockerfile varies: the modules its build checks import.
ENGINE_ARGS = {
    MEM0.name: {"ENGINE_IMPORTS": "mem0"},
    GRAPHITI.name: {"ENGINE_IMPORTS": "graphiti_core, kuzu"},
}
NODE = ImageSpec("node", "harness-node")
ENGINE_IMAGES = (MEM0, GRAPHITI, NODE)
ENGINES_FLAG = "engines"  # --extra engines: all three


def extra_specs(names: tuple[str, ...]) -> list[ImageSpec]:
    known = {spec.name: spec for spec in ENGINE_IMAGES}
    chosen: list[ImageSpec] = []
    for name in names:
        if name == ENGINES_FLAG:
            chosen += [s for s in ENGINE_IMAGES if s not in chosen]
        elif name in known:
            chosen += [known[name]] if known[name] not in chosen else []
        else:
            raise HarnessError(
                f"no extra image {name!r}",
                hint=f"choose among {', '.join([ENGINES_FLAG, *known])}",
            )
    return chosen


def build_extras(
    docker: DockerCLI,
    root: Path,
    cache: Path,
    names: tuple[str, ...],
    base_requirements: str,
    arm: ImageInfo,
    force: bool,
    log: Log,
) -> list[ImageInfo]:
    built: list[ImageInfo] = []
    for spec in extra_specs(names):
        engine_args = ENGINE_ARGS.get(spec.name, {})
        if spec is NODE:
            inputs, files = node_inputs(root), _node_files(root, cache, log)
        else:
            inputs, files = _engine_inputs(root, cache, spec, base_requirements, log)
        # The build arguments are inputs too: the shared Dockerfile alone does not tell the
        # engines apart.
        args_text = json.dumps(engine_args, sort_keys=True)
        built.append(
            build_one(
                docker,
                root,
                spec,
                inputs=sha256_text(folder_text(root, spec), args_text, inputs, arm.id),
                files=files,
                build_args={"ARM_IMAGE": ARM.tag, **engine_args},
                force=force,
                log=log,
            )
        )
    return built


def _engine_inputs(
    root: Path, cache: Path, spec: ImageSpec, base_requirements: str, log: Log
) -> tuple[str, Callable[[], list[Path]]]:
    wheelhouse = cache / f"wheelhouse-{spec.name}"
    requirements = wheelhouse / "requirements.txt"
    pinned = lock_extra(
        root,
        root / "images" / spec.source / spec.name / "requirements.in",
        base_requirements,
        requirements,
        log,
    )

    def files() -> list[Path]:
        # Fetched only when the image is rebuilt.
        fill_wheelhouse(root, wheelhouse, pinned, log)
        return [requirements, *sorted(wheelhouse.glob("*.whl"))]

    return sha256_text(pinned), files


def _node_files(root: Path, cache: Path, log: Log) -> Callable[[], list[Path]]:
    def files() -> list[Path]:
        return stage_node(root, cache, log)

    return files
