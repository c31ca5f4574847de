"""JSON schemas: instances grounded in the request, formats and numbers, regex examples,
json_object shapes.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "formats",
    "grounded",
    "instance",
    "json_shape",
    "numbers",
    "regex_example",
    "structured",
    "support",
    "walker",
]
