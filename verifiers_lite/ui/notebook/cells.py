"""Which notebook cell is running, so a warning shown once in a cell is not repeated in it.

A progress display that showed a warning in the running cell notes it; the results' HTML in that
same cell (a cell runs a job and shows what it returned) then leaves it out. Outside IPython
there is no cell and nothing is noted or skipped. IPython is looked up, never imported: a script
that did not import it has no cell.
"""

from __future__ import annotations

import sys

# warning text -> the execution count of the cell that showed it
_SHOWN_IN_CELL: dict[str, int] = {}


def current_cell() -> int | None:
    """The running IPython cell's execution count; None outside IPython."""
    ipython = sys.modules.get("IPython")
    shell = (
        ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    )
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def note_shown(warning: str) -> None:
    """A display has shown ``warning`` to the user in the current cell."""
    cell = current_cell()
    if cell is not None:
        _SHOWN_IN_CELL[warning] = cell


def shown_in_this_cell(warning: str) -> bool:
    """Whether a display already showed ``warning`` in the running cell."""
    cell = current_cell()
    return cell is not None and _SHOWN_IN_CELL.get(warning) == cell
