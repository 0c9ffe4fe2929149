"""Peak resident memory of this process, measured so that a parent's peak does not leak in.

``getrusage().ru_maxrss`` survives fork+exec on Linux: a small child of a large parent (a
benchmark started from a pytest process, say) reports the parent's peak. ``VmHWM`` in
/proc/self/status belongs to this process's own address space, so it is used where available.
"""

from __future__ import annotations

import resource


def peak_rss_mb() -> float:
    """Peak RSS of this process in MB."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
