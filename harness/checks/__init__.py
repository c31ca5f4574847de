"""The checks a finished run is put through: the determinism gate, the audit, the replay
comparison, the memory controls and the canary scan. They read runs (rundir/) and never run arms."""
