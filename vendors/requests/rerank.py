"""The checks of Cohere's and Voyage's rerank requests (POST /v2/rerank, POST /v1/rerank), in
their own words."""

from __future__ import annotations

from typing import Any

from vendors.errors import VendorRequestError

_MAX_DOCUMENTS = 1000  # both vendors' per-request limit


def check_cohere(body: dict[str, Any]) -> None:
    """The request checks (proxy.flow.intake runs them in both modes)."""
    required_string(body, "model")
    required_string(body, "query")
    documents = [cohere_document_text(d, i) for i, d in enumerate(rerank_documents(body))]
    top_limit(body, "top_n", len(documents))


def check_voyage(body: dict[str, Any]) -> None:
    required_string(body, "model")
    required_string(body, "query")
    documents = rerank_documents(body)
    top_limit(body, "top_k", len(documents))


def required_string(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if value is None:
        raise VendorRequestError(400, f"{name}: Field required", name)
    if not isinstance(value, str):
        raise VendorRequestError(400, f"{name}: Input should be a valid string", name)
    if not value.strip():
        raise VendorRequestError(400, f"{name}: must not be empty", name)
    return value


def rerank_documents(body: dict[str, Any]) -> list[Any]:
    docs = body.get("documents")
    if docs is None:
        raise VendorRequestError(400, "documents: Field required", "documents")
    if not isinstance(docs, list):
        raise VendorRequestError(400, "documents: Input should be a valid list", "documents")
    if not docs:
        raise VendorRequestError(400, "documents: list of documents must not be empty", "documents")
    if len(docs) > _MAX_DOCUMENTS:
        raise VendorRequestError(
            400, f"documents: at most {_MAX_DOCUMENTS} documents per request", "documents"
        )
    return docs


def cohere_document_text(doc: Any, index: int) -> str:
    if isinstance(doc, str):
        return doc
    # Older v2 clients may still send {"text": ...} or other string fields (RerankDocument).
    if isinstance(doc, dict) and doc and all(isinstance(v, str) for v in doc.values()):
        return str(doc["text"]) if "text" in doc else "\n".join(f"{k}: {v}" for k, v in doc.items())
    raise VendorRequestError(400, f"documents.{index}: Input should be a valid string", "documents")


def top_limit(body: dict[str, Any], name: str, count: int) -> int:
    value = body.get(name)
    if value is None:
        return count
    if isinstance(value, bool) or not isinstance(value, int):
        raise VendorRequestError(400, f"{name}: Input should be a valid integer", name)
    if value < 1:
        raise VendorRequestError(400, f"{name}: must be greater than 0", name)
    return min(value, count)
