"""The watchdog process's code: it kills the process groups the driver left when the driver dies.

The driver writes ``+PGID`` when a program starts and ``-PGID`` once its group is dead. When the
driver's end of the pipe closes (it exited, crashed or was killed with SIGKILL), every group
still registered gets SIGKILL. The code runs as ``python -I -S -c SOURCE``: standard library
only, no import of the package, ready within milliseconds.
"""

from __future__ import annotations

SOURCE = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    line = line.strip()
    if not line:
        continue
    pgid = int(line[1:])
    if line[:1] == b"+":
        groups.add(pgid)
    else:
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""
