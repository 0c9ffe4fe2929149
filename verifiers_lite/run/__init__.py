"""Running an environment over a dataset: the scheduler (``generate``), its options (``RunConfig``),
the input plan and the advice a resume gives when only the rubric changed."""
