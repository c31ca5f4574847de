"""What a run records of the network: the arms' refused connections (`egress.jsonl`) and the
proxy's own (`proxy_egress.jsonl`), when the orchestrator saw each (`strays_seen.jsonl`), the
round trips it measured (`rtt.jsonl`), and the day's compatibility probe and the route it chose
(`probe.json`).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = ["egress", "probe_file", "proxy_egress", "rtt", "strays_seen"]
