"""Isolation backends: how arms and the proxy are started, kept apart and stopped.

`base.py` is the contract; `local/` and `docker/` are the two backends, each with its own
`cleanup` of what crashed runs left; beside them sits what both use (the host firewall, the
proxy's OS rule, who owns a run's resources, egress attribution, clock pinning, the proxy CA,
ports, pids.json) and `choose.py`, which makes the run's backend (and picks between them for
`--isolation auto`).
"""
