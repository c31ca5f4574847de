"""What a call costs: token counts, the vendors' usage fields, server tools, unbounded inputs, and
the billing that prices a reservation and a settlement.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

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
