"""JSON schemas: instances grounded in the request, formats and numbers, regex examples,
json_object shapes, a patch tool's document (patch_doc).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from stubs.schema.instance import instance_for
from stubs.schema.json_shape import described_schema
from stubs.schema.patch_doc import patch_when_nothing_new
from stubs.schema.structured import structured_json, structured_value

__all__ = [
    "described_schema",
    "instance_for",
    "patch_when_nothing_new",
    "structured_json",
    "structured_value",
]
