"""What the harness tells a run's proxy: every setting it starts with (`proxy.json`, the addon's
options) and, before each turn, the `/turn` message naming the item and turn an arm runs now.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = ["proxy_file", "turn_message"]
