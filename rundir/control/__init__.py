"""What the harness tells a run's proxy: every setting it starts with (`proxy.json`, the addon's
options) and, before each turn, the `/turn` message naming the item and turn an arm runs now.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from rundir.control.proxy_file import (
    MODES,
    PROXY_READY,
    ControlRelay,
    ProxyFile,
    ProxySettings,
    ProxySettingsError,
    PurposeRule,
    arm_of,
    instance_name,
    option_value,
    rule_purpose,
)
from rundir.control.turn_message import GUARD_PHASE, TurnMessage

__all__ = [
    "GUARD_PHASE",
    "MODES",
    "PROXY_READY",
    "ControlRelay",
    "ProxyFile",
    "ProxySettings",
    "ProxySettingsError",
    "PurposeRule",
    "TurnMessage",
    "arm_of",
    "instance_name",
    "option_value",
    "rule_purpose",
]
