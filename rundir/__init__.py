"""The run directory's formats: every file a run writes, its model and its reader.

Nothing here imports the rest of the project: the proxy, the orchestrator, the checks and the
report all read and write runs through these modules, so a format has one owner.

Grouped by what the files are: `runs/` (run.json, its manifest and seal, gate.json, voids),
`calls/` (calls.jsonl, bodies, the request hash, the reservation journal), `turns/`, `network/`
(egress, strays, round trips, the probe), `control/` (proxy.json, the /turn message),
`judgments/` (judgment sets) and `merge/` (`harness merge`). What every part shares stands here
at the top: the atomic write, the JSON-lines framing, the record base and its error, worker
names and the log format.
"""
