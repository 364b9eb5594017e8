"""Who owns `strata.pid`: the only process `stop` may ever signal.

The pid file's text cannot be trusted (the reference's `stop` sent SIGTERM to whatever it said: `-1` is every
process the user may signal, `0` the stopper's own process group, a stale number any recycled process). So a
running daemon holds two locks on the pid file for its whole life:

* an exclusive `flock`, which keeps a second daemon out (it belongs to the open file, so nothing else the
  daemon process does can drop it);
* an exclusive POSIX record lock (`fcntl`), whose owner any other process can ask the kernel for with
  `F_GETLK`, in its own pid namespace.

Guarantees:

* `lock_holder` names a pid only when the kernel reports that process as holding the record lock; the file's
  text is never used to choose whom to signal.
* `signal_holder` opens a pidfd on that pid and checks the lock again before signalling through the pidfd, so
  a daemon that exits in between (and a process that reuses its pid) is never signalled.
* A POSIX lock is released when its process closes *any* descriptor of the file, so this process never opens
  a pid file it holds (`_HELD` remembers them).
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
from pathlib import Path
from typing import BinaryIO

# struct flock on Linux: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid.
_FLOCK = "@hhqqi"
_HELD: dict[Path, BinaryIO] = {}


class PidFileBusyError(Exception):
    """Another process holds the daemon lock on this pid file."""


def _key(pid_file: Path) -> Path:
    return Path(os.path.realpath(pid_file))


def acquire(pid_file: Path) -> BinaryIO:
    """Lock `pid_file` for this process's daemon and write our pid into it; `PidFileBusyError` if taken."""
    key = _key(pid_file)
    if key in _HELD:
        raise PidFileBusyError(pid_file)
    while True:
        handle = open(pid_file, "a+b")  # noqa: SIM115 — held open (and locked) for the daemon's life
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise PidFileBusyError(pid_file) from None
        # Another daemon may have removed the file between our open and our lock: lock the live file.
        if pid_file.exists() and os.fstat(handle.fileno()).st_ino == pid_file.stat().st_ino:
            break
        handle.close()
    fcntl.lockf(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    handle.truncate(0)
    handle.write(str(os.getpid()).encode())
    handle.flush()
    os.fsync(handle.fileno())
    _HELD[key] = handle
    return handle


def release(pid_file: Path) -> None:
    """Remove the pid file and drop both locks (the file goes first, so no one sees it unlocked)."""
    handle = _HELD.pop(_key(pid_file), None)
    if handle is not None:
        pid_file.unlink(missing_ok=True)
        handle.close()


def flock_held(pid_file: Path) -> bool:
    """Whether some daemon (of this build) holds the pid file's flock."""
    if _key(pid_file) in _HELD:
        return True
    try:
        handle = open(pid_file, "rb")  # noqa: SIM115 — closed below
    except FileNotFoundError:
        return False
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


def lock_holder(pid_file: Path) -> int | None:
    """The pid (in our namespace) of the process holding the daemon's record lock, else None."""
    if _key(pid_file) in _HELD:
        return os.getpid()
    try:
        handle = open(pid_file, "rb")  # noqa: SIM115 — closed below
    except FileNotFoundError:
        return None
    with handle:
        query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(handle.fileno(), fcntl.F_GETLK, query)
    lock_type, _whence, _start, _length, pid = struct.unpack(_FLOCK, answer)
    # A holder outside our pid namespace is reported as pid 0: it cannot be identified, so it is not named.
    if lock_type == fcntl.F_UNLCK or pid <= 0:
        return None
    return pid


def signal_holder(pid_file: Path, signum: signal.Signals) -> int | None:
    """Send `signum` to the daemon holding `pid_file`, if one provably does; returns the pid signalled."""
    pid = lock_holder(pid_file)
    if pid is None or pid == os.getpid():
        return None
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    try:
        # The pidfd pins this very process: if it still holds the lock now, it is the daemon.
        if lock_holder(pid_file) != pid:
            return None
        signal.pidfd_send_signal(pidfd, signum)
    except ProcessLookupError:
        return None
    finally:
        os.close(pidfd)
    return pid
