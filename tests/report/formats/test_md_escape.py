"""report.md shows every string from a run file, the ledger, a judgment set or the header as
text: no tag, link or image reaches a markdown viewer, in the plain and the `--public` copy.

One hostile run (and hostile inputs) carries a different payload in each field; the report is
rendered by a real CommonMark renderer (markdown-it-py, with inline HTML on, as GitHub and most
viewers allow) and each field's payload must be in the page as text and nowhere as markup.
Arm-written fields (the model names and purposes in calls.jsonl) come first."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from harness.report.formats.md_escape import escape
from ledger.ledger import Ledger
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration

RUN = "r-hostile"


def payload(n: int) -> str:
    """A tag with a script, a link, an image and a bare host: each must stay text."""
    return f"<img src=x onerror=alert({n})> [click{n}](javascript:alert({n})) ![im{n}](x{n}.png)"


# field -> its payload number; arm-written first.
FIELDS = {
    "model_requested (calls.jsonl)": 1,
    "model_served (calls.jsonl)": 2,
    "purpose (calls.jsonl)": 3,
    "question (header)": 4,
    "metrics (header)": 5,
    "limitations (header)": 6,
    "judge (judgments)": 7,
    "metric (judgments)": 8,
    "family (judgments)": 9,
    "stage name (ledger)": 10,
    "provenance name": 11,
    "provenance kind": 12,
    "provenance source": 13,
}
# Fields a public copy leaves out by design (a material's source may name a private place).
NOT_IN_PUBLIC = {"provenance source"}
PRICES = """schema = 1
table_version = "test.1"
checked = 2026-12-01
currency = "USD"
[models."gpt-4.1-mini"]
vendor = "openai"
input = 1
output = 2
max_output_tokens = 1000
context_window = 100000
"""


def hostile_inputs(folder: Path) -> list[str]:
    """The report's options, each input file carrying its fields' payloads."""
    folder.mkdir()
    header = folder / "header.toml"
    header.write_text(
        f"question = {json.dumps(payload(4))}\n"
        f"metrics = [{json.dumps(payload(5))}]\n"
        f"limitations = [{json.dumps(payload(6))}]\n"
    )
    judgments = folder / "judgments.jsonl"
    judgments.write_text(
        "".join(
            json.dumps(
                {
                    "item": "x",
                    "arm": arm,
                    "turn": 0,
                    "correct": True,
                    "judge": payload(7),
                    "metric": payload(8),
                    "family": payload(9),
                    "rubric_sha256": "c" * 64,
                }
            )
            + "\n"
            for arm in ("a", "b")
        )
    )
    provenance = folder / "provenance.jsonl"
    provenance.write_text(
        json.dumps(
            {"name": payload(11), "kind": payload(12), "sha256": "d" * 64, "source": payload(13)}
        )
        + "\n"
    )
    ledger_path = folder / "ledger.jsonl"
    led = Ledger(ledger_path)
    led.open_stage(payload(10), Decimal(5))
    led.reserve_run(RUN, Decimal(2), stage=payload(10))
    led.close()
    prices = folder / "prices.toml"
    prices.write_text(PRICES)
    return [
        "--header", str(header), "--judgments", str(judgments), "--provenance", str(provenance),
        "--ledger", str(ledger_path), "--prices", str(prices),
    ]  # fmt: skip


@dataclass
class Page(HTMLParser):
    """What a markdown viewer would build from report.md: its tags and its text."""

    tags: list[tuple[str, list[tuple[str, str | None]]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


# What the report's own markdown may make (headings, lists, tables, code, emphasis).
ALLOWED_TAGS = {
    "h1", "h2", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code", "strong",
    "em",
}  # fmt: skip


def own_anchor(attrs: list[tuple[str, str | None]]) -> bool:
    """`<a id="sN">` before section N, or `<a href="#sN">` in the contents."""
    return len(attrs) == 1 and bool(
        re.fullmatch(r"(id=s|href=#s)\d{1,2}", "=".join(map(str, attrs[0])))
    )


def rendered(markdown: str) -> Page:
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    page = Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """report.md and report.html of the hostile run, plain and public."""
    root = tmp_path_factory.mktemp("escaping")
    served = call(RUN, 1, "a", "x", 0)  # the arm picks its model and names its purpose
    served.model_served, served.purpose = payload(2), payload(3)
    unserved = call(RUN, 3, "a", "x", 0)  # a model named by a call that was not served
    unserved.model_requested, unserved.model_served = payload(1), None
    calls = [served, call(RUN, 2, "b", "x", 0), unserved]
    turns = [turn(RUN, "a", "x", 0), turn(RUN, "b", "x", 0)]
    run_dir = write_run(root, RUN, ["a", "b"], turns, calls)
    options = hostile_inputs(root / "inputs")
    out = {}
    for copy, extra in (("plain", []), ("public", ["--public"])):
        folder = root / copy
        done = harness(
            "report", str(run_dir), "--out", str(folder), "--format", "md,html", "--resamples",
            "200",
            *options, *extra,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        out[copy] = (folder / "report.md").read_text()
        out[f"{copy} html"] = (folder / "report.html").read_text()
    return out


@pytest.mark.parametrize("copy", ["plain", "public"])
@pytest.mark.parametrize("name", list(FIELDS))
def test_each_field_is_text_in_the_markdown(reports: dict[str, str], name: str, copy: str) -> None:
    markdown = reports[copy]
    n = FIELDS[name]
    page = rendered(markdown)
    shown = "".join(page.text)
    if copy == "public" and name.split(" (")[0] in NOT_IN_PUBLIC:
        assert f"alert({n})" not in markdown
        return
    # The field reached the report, and a viewer shows it as the characters it holds...
    assert f"onerror=alert({n})" in markdown, f"{name} is not in the {copy} report"
    assert f"<img src=x onerror=alert({n})>" in shown
    assert f"[click{n}](javascript:alert({n}))" in shown
    # ...and nothing of it as markup: no tag but the report's own, no attribute at all.
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS | {"a"}, page.tags
    assert all(not attrs for tag, attrs in page.tags if tag not in ("td", "th", "a")), page.tags
    # The only links are the report's own: its contents to its sections' anchors.
    assert all(own_anchor(attrs) for tag, attrs in page.tags if tag == "a"), page.tags
    assert f"<img src=x onerror=alert({n})>" not in markdown


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "[a](https://evil.example)",
        "![a](https://evil.example/x.png)",
        "<https://evil.example>",
        "see https://evil.example and www.evil.example or mail@evil.example",
        "line one\n# a heading\n| a | table |",
        "a `code span` that ` closes early <b>bold</b>",
        "&lt;img src=x onerror=alert(1)&gt; stays as typed",
        "a trailing backslash \\",
        "[ref]: https://evil.example",
    ],
)
def test_escape_renders_as_the_characters_it_was_given(text: str) -> None:
    page = rendered(f"Before {escape(text)} after.")
    assert [tag for tag, _ in page.tags] in (["p"], ["p", "code"]), page.tags
    flat = " ".join(text.split())
    if "`" not in text:  # inside a code span the escapes show as typed; outside, not at all
        assert "".join(page.text).strip() == f"Before {flat} after."
    escaped = escape(text)
    assert "://" not in escaped and "www." not in escaped and "\n" not in escaped


@pytest.mark.parametrize("copy", ["plain", "public"])
@pytest.mark.parametrize("name", list(FIELDS))
def test_each_field_is_text_in_the_html_and_its_charts(
    reports: dict[str, str], name: str, copy: str
) -> None:
    html = reports[f"{copy} html"]
    n = FIELDS[name]
    if copy == "public" and name.split(" (")[0] in NOT_IN_PUBLIC:
        assert f"alert({n})" not in html
        return
    page = Page()
    page.feed(html)
    assert f"<img src=x onerror=alert({n})>" in "".join(page.text), f"{name} not in the page"
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"img", "script", "iframe", "object", "embed"}, tags
    # The only links are the report's own: its contents, and rows into the drill-down (whose
    # query is percent-encoded, so a hostile metric name cannot leave the attribute).
    links = [dict(attrs) for tag, attrs in page.tags if tag == "a"]
    assert all(
        len(a) == 1
        and re.fullmatch(r"#s\d{1,2}|drilldown\.html#q=[A-Za-z0-9%._~-]*", a["href"] or "")
        for a in links
    ), links
    assert not any(key.startswith("on") for _, attrs in page.tags for key, _ in attrs)
