"""What a call costs: token counts, the vendors' usage fields, server tools, unbounded inputs, and
the billing that prices a reservation and a settlement.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.metering.billing import (
        PREMIUM_TIER_WORST_MULTIPLE,
        PREMIUM_TIERS,
        billable,
        booked_tool_uses,
        budget_refusal,
        input_bound,
        max_output,
        reserved_input,
        unpriced_option,
    )
    from proxy.metering.server_tools import ToolPlan, plan_tools
    from proxy.metering.tokencount import preload
    from proxy.metering.usage import (
        STREAM_ROUTES,
        MeteredUsage,
        StreamMeter,
        model_from_body,
        usage_from_body,
    )

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "MeteredUsage": "proxy.metering.usage",
    "PREMIUM_TIERS": "proxy.metering.billing",
    "PREMIUM_TIER_WORST_MULTIPLE": "proxy.metering.billing",
    "STREAM_ROUTES": "proxy.metering.usage",
    "StreamMeter": "proxy.metering.usage",
    "ToolPlan": "proxy.metering.server_tools",
    "billable": "proxy.metering.billing",
    "booked_tool_uses": "proxy.metering.billing",
    "budget_refusal": "proxy.metering.billing",
    "input_bound": "proxy.metering.billing",
    "max_output": "proxy.metering.billing",
    "model_from_body": "proxy.metering.usage",
    "plan_tools": "proxy.metering.server_tools",
    "preload": "proxy.metering.tokencount",
    "reserved_input": "proxy.metering.billing",
    "unpriced_option": "proxy.metering.billing",
    "usage_from_body": "proxy.metering.usage",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "PREMIUM_TIERS",
    "PREMIUM_TIER_WORST_MULTIPLE",
    "STREAM_ROUTES",
    "MeteredUsage",
    "StreamMeter",
    "ToolPlan",
    "billable",
    "booked_tool_uses",
    "budget_refusal",
    "input_bound",
    "max_output",
    "model_from_body",
    "plan_tools",
    "preload",
    "reserved_input",
    "unpriced_option",
    "usage_from_body",
]
