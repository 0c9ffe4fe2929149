"""The early-stop rule on the validation probe: stop after ``patience`` probes without a new best
(by more than ``min_delta``), never before ``min_probes``."""

from __future__ import annotations

import pytest

from verifiers_lite.train import PlateauStop


def _stop_index(values: list[float], patience: int, min_delta: float = 0.0, min_probes: int = 1):
    """Independent statement of the rule: the first probe after which the last ``patience``
    probes were all no better than the best before them (+ min_delta)."""
    for i in range(len(values)):
        if i + 1 < max(min_probes, patience + 1) or patience == 0:
            continue
        best_before = max(values[: i + 1 - patience])
        if all(v <= best_before + min_delta for v in values[i + 1 - patience : i + 1]):
            return i
    return None


def _run(values: list[float], **kw) -> int | None:
    rule = PlateauStop(**kw)
    for i, v in enumerate(values):
        if rule.update(v):
            return i
    return None


@pytest.mark.parametrize(
    "values",
    [
        [0.2, 0.3, 0.4, 0.5, 0.6],  # improving: never stops
        [0.2, 0.3, 0.3, 0.29, 0.31, 0.31, 0.30, 0.30],
        [0.5, 0.4, 0.3, 0.2],
        [0.2, 0.25, 0.22, 0.26, 0.26, 0.24, 0.2, 0.1],
    ],
)
@pytest.mark.parametrize("patience", [0, 1, 2, 3])
@pytest.mark.parametrize("min_delta", [0.0, 0.02])
def test_the_rule_stops_where_the_plateau_definition_says(values, patience, min_delta) -> None:
    assert _run(values, patience=patience, min_delta=min_delta) == _stop_index(
        values, patience, min_delta
    )


def test_a_hand_worked_case() -> None:
    # best 0.30 at probe 1; probes 2 and 3 are not better: patience 2 stops at probe 3.
    assert _run([0.2, 0.3, 0.3, 0.25, 0.9], patience=2) == 3
    # min_probes holds the stop back until 6 probes were taken.
    assert _run([0.2, 0.3, 0.3, 0.25, 0.2, 0.2, 0.2], patience=2, min_probes=6) == 5


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        PlateauStop(patience=-1)
    with pytest.raises(ValueError):
        PlateauStop(min_probes=0)
