"""A run's inputs grouped by example_id and held as positions: an input is read and prepared
when its group is scheduled, so a run of a million rollouts holds a few integers per rollout,
not a million prepared inputs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from verifiers_lite.core.dataset import RowFields, row_reader
from verifiers_lite.core.records import RolloutInput

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment


class InputPlan(Mapping[int, int]):
    """``example_id -> number of rollouts`` over a run's inputs, groups in first-seen order.

    Every input is prepared once when the plan is made (a bad row is a ValueError naming the
    row and the field, before the first request; ``check(input, where)`` may refuse more, such
    as an image for a model that reads text only) and again when its group is read: the plan
    keeps only the inputs' positions, four bytes per rollout (none when each example's inputs
    come together, as an evaluation's do). The caller's rows are read
    where they are (a list stays the caller's; a ``datasets.Dataset`` is read in windows).
    """

    def __init__(
        self,
        env: RunnableEnvironment,
        inputs: Any,
        check: Callable[[RolloutInput, str], None] | None = None,
    ) -> None:
        self._env = env
        self._rows = row_reader(inputs, "inputs")
        n = len(self._rows)
        eids = np.empty(n, dtype=np.int64)
        self.fields = (
            RowFields()
        )  # what the rows supply a reward function, checked before a request
        for i in range(n):
            inp = self.input(i)
            eids[i] = self._example_id(inp, i)
            self.fields.add(inp)
            if check is not None:
                check(inp, f"inputs row {i} (example {eids[i]}), field 'prompt'")
        sorted_ids, first, inverse, counts = np.unique(
            eids, return_index=True, return_inverse=True, return_counts=True
        )
        by_first = np.argsort(first, kind="stable")
        rank = np.empty(len(first), dtype=np.int64)
        rank[by_first] = np.arange(len(first))
        self._sorted_ids, self._rank = sorted_ids, rank
        self.example_ids = sorted_ids[by_first]  # first-seen order
        del eids, first
        # Positions grouped by example, groups in first-seen order, inputs in their order; none
        # kept when that is the caller's order (an evaluation's inputs: each example's together).
        positions = np.argsort(rank[inverse.reshape(-1)], kind="stable")
        del inverse
        in_order = bool(n == 0 or (positions[0] == 0 and (np.diff(positions) == 1).all()))
        self._positions = (
            None if in_order else positions.astype(np.int32 if n < 1 << 31 else np.int64)
        )
        del positions
        self._starts = np.concatenate([[0], np.cumsum(counts[by_first])]).astype(np.int64)

    @staticmethod
    def _example_id(inp: RolloutInput, index: int) -> int:
        eid = inp.get("example_id")
        if isinstance(eid, bool) or not isinstance(eid, int):
            raise ValueError(
                f"inputs row {index}: field 'example_id' must be an integer, got {eid!r}"
            )
        return eid

    @property
    def num_rollouts(self) -> int:
        return len(self._rows)

    def input(self, position: int) -> RolloutInput:
        """The input at ``position`` among the caller's, prepared by the environment."""
        return self._env.prepare_input(self._rows[position], position)

    def inputs(self) -> Iterator[RolloutInput]:
        """Every input, prepared one at a time, in the caller's order."""
        return (self.input(i) for i in range(self.num_rollouts))

    def _group(self, eid: object) -> int:
        if isinstance(eid, bool) or not isinstance(eid, (int, np.integer)):
            raise KeyError(eid)
        at = int(np.searchsorted(self._sorted_ids, eid))
        if at == len(self._sorted_ids) or self._sorted_ids[at] != eid:
            raise KeyError(eid)
        return int(self._rank[at])

    def _position(self, i: int) -> int:
        """The caller's position of the ``i``-th input in group order."""
        return i if self._positions is None else int(self._positions[i])

    def group(self, eid: int) -> list[RolloutInput]:
        """The inputs of example ``eid`` (rollout index = position in the list), prepared now."""
        g = self._group(eid)
        return [
            self.input(self._position(i))
            for i in range(int(self._starts[g]), int(self._starts[g + 1]))
        ]

    def first_input(self, eid: int) -> RolloutInput:
        return self.input(self._position(int(self._starts[self._group(eid)])))

    def __getitem__(self, eid: int) -> int:
        g = self._group(eid)
        return int(self._starts[g + 1] - self._starts[g])

    def __contains__(self, eid: object) -> bool:
        try:
            self._group(eid)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[int]:
        return (int(e) for e in self.example_ids)

    def __len__(self) -> int:
        return len(self.example_ids)

    def max_group(self) -> int:
        return int(np.diff(self._starts).max()) if len(self) else 0
