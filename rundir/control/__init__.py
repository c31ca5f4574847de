"""What the harness tells a run's proxy: every setting it starts with (`proxy.json`, the addon's
options) and, before each turn, the `/turn` message naming the item and turn an arm runs now.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ControlRelay": "rundir.control.proxy_file",
    "GUARD_PHASE": "rundir.control.turn_message",
    "MODES": "rundir.control.proxy_file",
    "PROXY_READY": "rundir.control.proxy_file",
    "ProxyFile": "rundir.control.proxy_file",
    "ProxySettings": "rundir.control.proxy_file",
    "ProxySettingsError": "rundir.control.proxy_file",
    "PurposeRule": "rundir.control.proxy_file",
    "TurnMessage": "rundir.control.turn_message",
    "arm_of": "rundir.control.proxy_file",
    "instance_name": "rundir.control.proxy_file",
    "option_value": "rundir.control.proxy_file",
    "rule_purpose": "rundir.control.proxy_file",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


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
