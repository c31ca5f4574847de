"""What a call costs: token counts, the vendors' usage fields, server tools, unbounded inputs, and
the billing that prices a reservation and a settlement.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "billing",
    "server_tools",
    "tokencount",
    "unbounded",
    "usage",
    "vendor_usage",
]
