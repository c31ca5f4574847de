"""The rooms' import arrows run one way (docs/architecture.md, "Rooms and the arrows between
them"): a format or a vendor fact that imported the proxy or the orchestrator would drag them into
every reader of a run, and a proxy that imported the orchestrator could no longer run on its own
(`python -m proxy`).

Read from the source with `ast`, so an import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("harness", "proxy", "stubs", "ledger", "rundir", "vendors", "canonical", "arms")
# room -> the rooms of ours it may import (itself always allowed).
ALLOWED: dict[str, set[str]] = {
    "canonical": set(),
    "vendors": set(),
    "rundir": {"canonical"},
    "ledger": {"canonical"},
    "stubs": {"vendors"},
    "proxy": {"stubs", "ledger", "rundir", "vendors", "canonical"},
    "arms": set(),  # an arm speaks the seam over HTTP; it imports nothing of the harness
    "harness": {"proxy", "stubs", "ledger", "rundir", "vendors", "canonical", "arms"},
}


def imported_rooms(path: Path) -> set[str]:
    rooms: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        rooms |= {name.split(".")[0] for name in names if name.split(".")[0] in OURS}
    return rooms


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_room_imports_only_what_is_below_it(room: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_rooms(path) - ALLOWED[room] - {room})
        for path in sorted((ROOT / room).rglob("*.py"))
    }
    assert {file: rooms for file, rooms in wrong.items() if rooms} == {}


def test_isolation_does_not_import_the_cli() -> None:
    """The backends are used by the CLI, never the other way round."""
    offenders = []
    for path in sorted((ROOT / "harness" / "isolation").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module and module.startswith("harness.cli"):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


# --- the import graph, module by module -------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for room in OURS for p in sorted((ROOT / room).rglob("*.py"))}


def _imports(path: Path) -> list[str]:
    """Every module of ours `path` imports (`from a.b import c` may name module a.b.c)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return [name for name in names if name.split(".")[0] in OURS]


def module_named(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours an imported name lands in (`a.b.c`: module a.b.c, or a name in a.b)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports (a package's own __init__ left out)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {module_named(name, modules) for name in _imports(path)}
        graph[module] = {t for t in targets if t and t != module and not module.startswith(f"{t}.")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def part_graph(room: str, graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """`room`'s parts (a sub-package, or a module directly in the room) and their arrows; a room
    may be a dotted part of a room (`harness.run`), whose own parts are then compared."""
    depth = room.count(".") + 1

    def part(module: str) -> str | None:
        pieces = module.split(".")
        inside = pieces[:depth] == room.split(".") and len(pieces) > depth
        return pieces[depth] if inside else None

    parts: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = part(module)
        if source is None:
            continue
        arrows = parts.setdefault(source, set())
        arrows |= {p for t in targets if (p := part(t)) is not None and p != source}
    return parts


def test_no_module_imports_itself_back() -> None:
    """No import cycle between modules, not even one held by an import inside a function."""
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("room", ["harness", "harness.run", "proxy", "stubs", "rundir"])
def test_no_cycle_between_a_rooms_parts(room: str) -> None:
    """Sub-packages (and the modules beside them) import one way: checks never imports run back,
    nor images isolation, nor any proxy part the parts that use it, nor vectors/ the rules that
    load the stubs file (its handlers read their context through VectorSettings), nor formats/
    and schema/ each other, nor a run directory's records the merge that joins them, nor
    harness/run's parts (stages/, memory/...) and its entries (orchestrator...) each other."""
    assert cycles(part_graph(room, import_graph())) == []


# proxy/'s parts: each may import only the parts listed (and itself). flow is one call's
# mode-independent core; metering and redact build on it; the call log records it; live forwards
# and meters; modes put record, replay and live behind one Mode; app assembles mitmproxy.
PROXY_PARTS: dict[str, set[str]] = {
    "flow": set(),
    "metering": {"flow"},
    "redact": {"flow"},
    "calllog": {"flow"},
    "live": {"flow", "metering", "redact"},
    "modes": {"flow"},
    "app": {"flow", "calllog", "modes", "live", "metering", "redact"},
    "__main__": {"app"},
}
# Only record and replay answer from stubs/; everything else reads vendor facts from vendors/.
PROXY_PARTS_WITH_STUBS = {"modes", "app"}


def test_proxy_parts_import_only_the_parts_below_them() -> None:
    graph = import_graph()
    wrong = {
        part: sorted(arrows - PROXY_PARTS.get(part, set()))
        for part, arrows in part_graph("proxy", graph).items()
    }
    assert {part: arrows for part, arrows in wrong.items() if arrows} == {}


def test_every_proxy_module_sits_in_a_part() -> None:
    loose = sorted(p.name for p in (ROOT / "proxy").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"]
    assert set(PROXY_PARTS) - {"__main__"} == {
        p.name for p in (ROOT / "proxy").iterdir() if (p / "__init__.py").exists()
    }


def test_only_record_and_replay_import_the_stubs() -> None:
    offenders = sorted(
        module
        for module, targets in import_graph().items()
        if module.startswith("proxy.")
        and module.split(".")[1] not in PROXY_PARTS_WITH_STUBS
        and any(t.split(".")[0] == "stubs" for t in targets)
    )
    assert offenders == []


# harness/report/'s parts in the order its data flows: each may import only those listed. reading
# reads the runs and inputs; figures computes on them; context holds both for the builders;
# confirmatory reads the verdicts; sections builds the sections; formats writes them out.
REPORT_PARTS: dict[str, set[str]] = {
    "model": set(),
    "public": set(),
    "charts": set(),
    "reading": set(),
    "figures": {"reading", "model"},
    "context": {"reading", "figures", "public"},
    "confirmatory": {"reading", "context", "model", "charts"},
    "sections": {"reading", "figures", "context", "confirmatory", "model", "charts"},
    "formats": {"reading", "figures", "context", "sections", "model", "public"},
    "runs_index": {"reading", "formats"},
}


def test_report_parts_import_only_the_parts_below_them() -> None:
    """generate.py, the entry, may import every part; no other part imports it."""
    parts: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        if module.startswith("harness.report."):
            arrows = parts.setdefault(module.split(".")[2], set())
            arrows |= {t.split(".")[2] for t in targets if t.startswith("harness.report.")}
    allowed = {**REPORT_PARTS, "generate": set(REPORT_PARTS) - {"runs_index"}}
    wrong = {
        part: sorted(arrows - allowed.get(part, set()) - {part}) for part, arrows in parts.items()
    }
    assert {part: arrows for part, arrows in wrong.items() if arrows} == {}


@pytest.mark.parametrize(
    "room", ["proxy", "stubs", "harness/isolation", "harness/run", "harness/report", "rundir"]
)
def test_every_part_says_what_it_holds(room: str) -> None:
    """Each sub-package has an `__init__` with a docstring and an `__all__`."""
    missing = []
    for init in sorted((ROOT / room).glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        has_all = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            for node in tree.body
        )
        if not (ast.get_docstring(tree) and has_all):
            missing.append(str(init.relative_to(ROOT)))
    assert missing == []


# rundir/'s top holds what every part shares (the atomic write, the JSON-lines framing, the record
# base and its error, worker names, logging); every format sits in a part (runs, calls, turns,
# network, control, judgments, merge).
RUNDIR_TOP = ["atomic", "errors", "instances", "jsonlines", "logs", "model"]


def test_rundir_top_holds_only_what_its_parts_share() -> None:
    top = sorted(p.stem for p in (ROOT / "rundir").glob("*.py") if p.stem != "__init__")
    assert top == RUNDIR_TOP
    upward = {
        module: sorted(t for t in targets if t.count(".") > 1 and t.startswith("rundir."))
        for module, targets in import_graph().items()
        if module in {f"rundir.{name}" for name in RUNDIR_TOP}
    }
    assert {module: parts for module, parts in upward.items() if parts} == {}


# The one door from the orchestrator into the proxy: `harness proxy serve` runs it in-process.
# Everything else reaches the proxy through run-directory formats (rundir/control/proxy_file.py).
HARNESS_PROXY_DOOR = "harness/cli/proxy.py"


def test_harness_uses_the_proxy_only_through_its_cli() -> None:
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "harness").rglob("*.py"))
        if str(path.relative_to(ROOT)) != HARNESS_PROXY_DOOR
        and imported_rooms(path) & {"proxy", "stubs"}
    )
    assert offenders == []


# harness/isolation/: the backends in their own packages (docker/, local/) behind base.py's
# contract, what both use beside them. Outside docker/, the harness sees the docker backend only
# through its face (the package's __all__) and the one Docker CLI wrapper (`harness images` and
# stopping one arm run docker through it); the local backend and the shared modules never import
# docker/ at all.
ISOLATION = "harness.isolation"
DOCKER = f"{ISOLATION}.docker"
DOCKER_DOORS = {DOCKER, f"{DOCKER}.cli"}


def test_docker_internals_are_used_only_through_the_backend() -> None:
    offenders = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        if not (module == DOCKER or module.startswith(f"{DOCKER}."))
        for target in targets
        if target.startswith(f"{DOCKER}.") and target not in DOCKER_DOORS
    )
    assert offenders == []


def test_local_backend_and_shared_modules_do_not_import_docker() -> None:
    """local/ and the modules both backends share import nothing of docker/; only choose.py, which
    picks between the backends, may ask docker's face."""
    offenders = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        if module.startswith(f"{ISOLATION}.")
        and not (module == DOCKER or module.startswith(f"{DOCKER}."))
        and module != f"{ISOLATION}.choose"
        for target in targets
        if target == DOCKER or target.startswith(f"{DOCKER}.")
    )
    assert offenders == []


def test_isolation_keeps_no_backend_file_beside_the_base() -> None:
    """Each backend's modules sit in its package; nothing named for one is left beside them."""
    loose = sorted(
        p.name
        for p in (ROOT / "harness" / "isolation").glob("*.py")
        if p.name.startswith(("docker", "local"))
    )
    assert loose == []
    assert {"docker", "local"} <= {
        p.name for p in (ROOT / "harness" / "isolation").iterdir() if (p / "__init__.py").exists()
    }


def test_every_backend_cleans_up_after_itself() -> None:
    """`harness cleanup` asks each backend (base.py's `cleanup`), never a backend's modules."""
    from harness.isolation.base import IsolationBackend
    from harness.isolation.docker import DockerBackend
    from harness.isolation.local import LocalBackend

    assert "cleanup" in vars(IsolationBackend)
    for backend in (DockerBackend, LocalBackend):
        assert "cleanup" in vars(backend), backend.__name__
    cli = import_graph()["harness.cli.study"]
    assert {t for t in cli if t.startswith(f"{ISOLATION}.")} <= {DOCKER, f"{ISOLATION}.local"}


# --- faces: a part is used through its __init__ -------------------------------------------------
# A part is a sub-package of a room (harness.report, proxy.flow, rundir.calls, ...). Shipped code
# outside a part names only what the part's __init__ exports (`from harness.report import
# build_report`), never a module inside it, so a part can rearrange its modules without touching its
# users. A part's own sub-parts are faces too (`from harness.isolation.docker import DockerBackend`
# loads the docker backend only for who asks for it). Inside a part, modules import their siblings
# directly (never through their own face: that would load the whole part from inside it). The room
# itself (harness, proxy, ...) is not a face: its modules are imported by name.


def _packages() -> set[str]:
    return {module for module, path in _modules().items() if path.name == "__init__.py"}


def face_for(importer: str, target: str, packages: set[str]) -> str | None:
    """The face `importer` must use to reach module `target`, or None if it may import it
    directly: the package holding `target`, unless `importer` is inside that package too."""
    if target in packages:
        return None  # a face, however deep
    parent = target.rpartition(".")[0]
    if parent.count(".") < 1 or parent not in packages:
        return None  # a module directly in a room (rundir/atomic.py) is its own face
    if importer == parent or importer.startswith(f"{parent}."):
        return None
    return parent


def test_the_face_is_the_package_holding_the_module() -> None:
    packages = {"harness.report", "harness.report.sections", "rundir.calls", "rundir"}
    assert face_for("harness.cli.report", "harness.report.generate", packages) == "harness.report"
    assert face_for("harness.cli.report", "harness.report.sections", packages) is None
    assert face_for("harness.report.generate", "harness.report.sections.table", packages) == (
        "harness.report.sections"
    )
    assert face_for("harness.report.sections.a", "harness.report.sections.b", packages) is None
    assert face_for("harness.report.generate", "harness.report.model", packages) is None
    assert face_for("proxy.app.addon", "rundir.calls.log", packages) == "rundir.calls"
    assert face_for("proxy.app.addon", "rundir.atomic", packages) is None


def reach_ins() -> list[str]:
    """Every import of a module inside a part from outside it (`a -> b.c.d (use b.c)`)."""
    modules, packages = _modules(), _packages()
    found = []
    for module, path in modules.items():
        for name in _imports(path):
            target = module_named(name, modules)
            face = face_for(module, target, packages) if target else None
            if face and target != face and not offered_by_face(face, target):
                found.append(f"{module} -> {target} (use {face})")
    return sorted(set(found))


@functools.cache
def offered_by_face(face: str, module: str) -> bool:
    """A face may offer one of its own modules as a namespace (`from harness.stats import rules`,
    then `rules.status(...)`), or a name spelled as a module is (`drive` in stages/drive.py): it
    imports that name itself and lists it in `__all__`."""
    parent, _, name = module.rpartition(".")
    if parent != face:
        return False
    tree = ast.parse(_modules()[face].read_text(encoding="utf-8"))
    bound = {  # at the top, or under TYPE_CHECKING for a face that loads on first use
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    declared = {
        element.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        and isinstance(node.value, (ast.List, ast.Tuple))
        for element in node.value.elts
        if isinstance(element, ast.Constant)
    }
    return name in bound and name in declared


def test_parts_are_used_through_their_faces() -> None:
    assert reach_ins() == []


def test_no_private_name_crosses_a_module() -> None:
    """`from a.b import _name` ties a module to another's insides; what is shared is public."""
    crossing = []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.level == 0
                and node.module.split(".")[0] in OURS
            ):
                crossing += [
                    f"{module} <- {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert crossing == []
