"""Whether a process still runs: for leftovers named by the pid of the process that made them (a killed
export's or database creation's temp file, a daemon's pid file)."""

from __future__ import annotations

import os


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
