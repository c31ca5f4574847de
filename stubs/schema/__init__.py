"""JSON schemas: instances grounded in the request, formats and numbers, regex examples,
json_object shapes, a patch tool's document (patch_doc).

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "formats",
    "grounded",
    "instance",
    "json_shape",
    "numbers",
    "patch_doc",
    "regex_example",
    "structured",
    "support",
    "walker",
]
