"""Statistics of results: clustered standard errors, intervals, paired differences, power, and the
per-example running totals they are computed from."""
