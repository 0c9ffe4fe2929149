"""A run's books: the run directory it opens (fresh or resumed, refusing another run's), the
rows it appends, the one live summary its displays read, and the metadata it finishes with.

The scheduler (``run/``) plans units, hands them to an executor and appends what comes back
to a :class:`~verifiers_lite.ledger.run_ledger.RunLedger`; everything a run records about
itself happens here. ``results/`` keeps the readers and the analysis of what was recorded.
"""
