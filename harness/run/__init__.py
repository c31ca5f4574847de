"""Running a study: the pipeline (prepare, start, drive, finish), the turn orchestrator, resume and
the attribution of stray connections. It uses isolation/ to start things and rundir/ to write."""
