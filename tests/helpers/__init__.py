"""Helpers the tests of every part share: throwaway studies run through the real CLI
(studies.py), the gate toy arm's studies (gate_studies.py), the coupled example copied
(coupled_example.py), run directories written with the harness's own record types
(report_runs.py) and merged shard runs (shard_runs.py)."""
