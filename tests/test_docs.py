"""The documentation stays inside the repository: every relative link in a tracked markdown file
names a tracked file (and, with `#anchor`, one of its headings), and no tracked text file names a
path outside the checkout (the design notes that lived beside it, a home or work folder)."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# Paths of the machine the project was written on, or the design folder that sat beside the
# checkout: a reader of the repository has neither.
OUTSIDE = re.compile(r"/work/|\.\./shared|DESIGN\.md|shared/notes|notes/wire-formats")


def tracked(*patterns: str) -> list[Path]:
    done = subprocess.run(
        ["git", "ls-files", "-z", "--", *patterns],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    names = [n for n in done.stdout.decode().split("\0") if n]
    return [REPO / n for n in names if (REPO / n).is_file()]


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in markdown.splitlines():
        if line.startswith("#") and not line.startswith("#!"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_anchors_follow_githubs_rule() -> None:
    assert anchors("## CLI start-up: harness --help\n## Report generation on 10,000 calls") == {
        "cli-start-up-harness---help",
        "report-generation-on-10000-calls",
    }


def broken_links(path: Path) -> list[str]:
    broken = []
    text = path.read_text()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # a URL, not a file of the repository
            file_part, _, anchor = target.partition("#")
            destination = (path.parent / file_part).resolve() if file_part else path
            outside = not destination.exists() or REPO not in [destination, *destination.parents]
            no_heading = (
                not outside
                and bool(anchor)
                and destination.suffix == ".md"
                and anchor not in anchors(destination.read_text())
            )
            if outside or no_heading:
                broken.append(target)
    return broken


@pytest.mark.parametrize(
    "path", tracked("*.md"), ids=lambda p: str(p.relative_to(REPO)) if isinstance(p, Path) else p
)
def test_every_relative_link_names_a_file_and_heading_of_the_repository(path: Path) -> None:
    assert not broken_links(path), f"{path.relative_to(REPO)}: broken links {broken_links(path)}"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = REPO / "docs" / "install.md"
    bad = tmp_path / "page.md"
    bad.write_text("[a](nowhere.md) [b](#no-such-heading) [c](https://example.com)\n# Real\n")
    assert broken_links(bad) == ["nowhere.md", "#no-such-heading"]
    assert not broken_links(page)


# A path in code spans (`proxy/app/server.py`, `images/engine/*/requirements.in`) whose first part
# is a folder of the repository; run-directory names (`bodies/pack.bin`) start elsewhere.
CODE_PATH = re.compile(r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)+)/?`")
# Records of their day: they name files as they were then.
HISTORY = ("docs/benchmarks-history.md",)


def repository_folders() -> set[str]:
    return {p.relative_to(REPO).parts[0] for p in tracked() if len(p.relative_to(REPO).parts) > 1}


def is_gone(found: str, folders: set[str]) -> bool:
    """A path under one of the repository's folders that matches no file there."""
    return found.split("/")[0] in folders and not list(REPO.glob(found))


def missing_paths(path: Path, folders: set[str]) -> list[str]:
    return [found for found in CODE_PATH.findall(path.read_text()) if is_gone(found, folders)]


def test_every_repository_path_the_docs_name_exists() -> None:
    folders = repository_folders()
    pages = [
        p for p in tracked("README.md", "docs/*.md") if str(p.relative_to(REPO)) not in HISTORY
    ]
    assert len(pages) > 5
    found = {str(p.relative_to(REPO)): missing_paths(p, folders) for p in pages}
    assert not any(found.values()), (
        f"docs name paths that are gone: { {k: v for k, v in found.items() if v} }"
    )


def test_a_path_that_is_gone_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("`stubs/prompt_parts.py` `images/engine/*/requirements.in` `bodies/pack.bin`\n")
    assert missing_paths(page, {"stubs", "images"}) == ["stubs/prompt_parts.py"]


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    found = []
    for path in tracked():
        if path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue  # binary files name no paths a reader follows
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


# Paths in Python comments and docstrings (`see harness/report/charts.py`): a name whose first
# folder is one of the repository's, or a bare file name ending in .py, must still exist. Files the
# code builds or that belong to Python itself are not the repository's to keep.
COMMENT_PATH = re.compile(r"(?<![\w./<>*-])([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)+)/?")
BARE_MODULE = re.compile(r"(?<![\w./<>*-])([A-Za-z_][A-Za-z0-9_]*\.py)\b")
NOT_OURS_TO_KEEP = (
    "site.py",  # Python's own start-up module, which sitecustomize.py extends
    "images/arm/sleepfix.so",  # compiled into the arm image at build time
    "bench/results",  # what the benchmarks write (ignored by git)
)


def comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                found.append((getattr(node, "lineno", 1), doc))
    return found


def stale_names(path: Path, folders: set[str], basenames: set[str]) -> list[str]:
    where = path.relative_to(REPO) if REPO in path.parents else path
    stale = []
    for line, text in comments_and_docstrings(path):
        gone = [p for p in COMMENT_PATH.findall(text) if is_gone(p.rstrip("."), folders)]
        gone += [
            b
            for b in BARE_MODULE.findall(text)
            if b not in basenames and not (path.parent / b).exists()
        ]
        stale += [
            f"{where}:{line}: {name}" for name in gone if not name.startswith(NOT_OURS_TO_KEEP)
        ]
    return stale


def test_no_comment_or_docstring_names_a_file_that_is_gone() -> None:
    files = tracked()
    folders = repository_folders()
    basenames = {p.name for p in files}
    found = [s for p in files if p.suffix == ".py" for s in stale_names(p, folders, basenames)]
    assert found == [], "\n".join(found)


def test_a_comment_naming_a_file_that_is_gone_is_found(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        '"""Reads proxy/live.py and rundir/atomic.py."""\n# see gone_module.py and conftest.py\n'
    )
    assert sorted(stale_names(module, {"proxy", "rundir"}, {"conftest.py"})) == [
        f"{module}:1: proxy/live.py",
        f"{module}:2: gone_module.py",
    ]
