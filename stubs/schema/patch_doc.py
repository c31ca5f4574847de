"""The input of a document-patching tool (trustcall's `PatchDoc`, which langmem's memory manager
offers beside its `Memory` tool once memories exist): the id of a document the prompt shows and
JSON Patch operations that write the user's newest fact into it.

trustcall lists the existing documents in its system prompt as
`<instance id=ID schema_type="Memory">{'content': '...'}</instance>` and applies the patches to
the document whose id the call names: an id the prompt does not show patches nothing (the
update is lost), and a path that is not a JSON pointer into the document fails to apply. So the
id is one the prompt shows (the document that shares the most words with what the user said),
and each patch replaces a string field the document has. When the user stated no fact (only
asked), there is nothing to patch: an empty list, as the tool's own description says.
Pure functions of the request.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from stubs.prompt import Grounding, grounding_of
from vendors.tokens import texts_of

# trustcall 0.0.x: `<instance id={id} schema_type="{name}">\n{doc}\n</instance>`. Bounded runs:
# the pattern scans what an arm sent.
_INSTANCE_RE = re.compile(
    r"<instance id=\"?([\w-]{1,80})\"?(?: [^>\n]{0,200})?>\n?(.{0,20000}?)\n?</instance>", re.S
)
_WORD_RE = re.compile(r"[a-z0-9]+")
_MAX_DOCS = 64


@dataclass(frozen=True)
class ShownDoc:
    doc_id: str
    text: str
    value: Any  # the document as parsed (a dict for trustcall's), or None


def is_patch_tool(schema: dict[str, Any]) -> bool:
    """A tool whose input names a document id and a list of patches (trustcall's PatchDoc)."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return False
    patches = props.get("patches")
    return (
        isinstance(props.get("json_doc_id"), dict)
        and isinstance(patches, dict)
        and patches.get("type") == "array"
    )


def shown_docs(texts: list[str]) -> list[ShownDoc]:
    """The documents the prompt shows, in order, each once."""
    out: dict[str, ShownDoc] = {}
    for text in texts:
        for match in _INSTANCE_RE.finditer(text):
            if len(out) >= _MAX_DOCS:
                break
            doc_id, doc = match.group(1), match.group(2).strip()
            out.setdefault(doc_id, ShownDoc(doc_id, doc, _parse(doc)))
    return list(out.values())


def _parse(doc: str) -> Any:
    """trustcall prints a document with Python's repr (single quotes); JSON is read too."""
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(doc)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return None


def _words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) > 2}


def _statements(grounding: Grounding) -> list[str]:
    """What the user stated (not asked): a question is not a fact to write down."""
    return [s for s in grounding.sentences if not s.rstrip().endswith("?")]


def prompt_texts(body: dict[str, Any]) -> list[str]:
    """Every text of the request's prompt (trustcall shows the documents in its system one)."""
    return [
        t
        for name in ("system", "instructions", "messages", "input")
        for t in texts_of(body.get(name))
    ]


def patch_doc_input(texts: list[str], grounding: Grounding) -> dict[str, Any] | None:
    """PatchDoc's input for a prompt with `texts`, or None when it shows no document."""
    docs = shown_docs(texts)
    if not docs:
        return None
    facts = _statements(grounding)
    said = _words(" ".join(facts))
    # The document the user's words touch most; the first shown on a tie.
    doc = max(docs, key=lambda d: len(said & _words(d.text)))
    value = doc.value if isinstance(doc.value, dict) else {}
    fields = [k for k, v in value.items() if isinstance(k, str) and isinstance(v, str)]
    if not facts or not fields:
        return {
            "json_doc_id": doc.doc_id,
            "planned_edits": "Nothing new was stated; the document stays as it is.",
            "patches": [],
        }
    # A JSON pointer escapes "~" and "/" inside a key (RFC 6901).
    path = "/" + fields[0].replace("~", "~0").replace("/", "~1")
    fact = " ".join(facts)
    return {
        "json_doc_id": doc.doc_id,
        "planned_edits": f"replace {path} with what the user said: {fact}",
        "patches": [{"op": "replace", "path": path, "value": fact}],
    }


def patch_when_nothing_new(body: dict[str, Any], schemas: dict[str, Any]) -> str | None:
    """The patch tool a forced call goes to when the user stated nothing new: langmem's second
    extraction must call a tool (tool_choice required), and a model that reads only a question
    patches a shown document with no operations rather than store the question as a memory.
    None when the request offers no patch tool, shows no document, or the user stated a fact."""
    patchers = [n for n, s in schemas.items() if isinstance(s, dict) and is_patch_tool(s)]
    if not patchers or _statements(grounding_of(body)):
        return None
    return patchers[0] if shown_docs(prompt_texts(body)) else None
