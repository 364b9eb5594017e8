"""File-system primitives: atomic writes, moves that never overwrite, and the store-wide lock."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from stratagate.strata.errors import DestinationExistsError, StoreBusyError

NAME_MAX = 255  # bytes in one file name on Linux file systems


def sibling_name(name: str, suffix: str, prefix: str = "") -> str:
    """`prefix + name + suffix`, with `name` cut (at a UTF-8 character boundary) so the result fits NAME_MAX.

    A file whose name already uses most of the limit must still get temp and backup names beside it.
    """
    room = NAME_MAX - len(prefix.encode()) - len(suffix.encode())
    cut = name.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
    return f"{prefix}{cut}{suffix}"


def temp_path(target: Path) -> Path:
    """A fresh temp name beside `target` (`.<name>.<random>.tmp`, which walks skip), always short enough."""
    return target.with_name(sibling_name(target.name, f".{uuid.uuid4().hex[:16]}.tmp", prefix="."))


def atomic_write_bytes(target: Path, data: bytes) -> None:
    """Write `data` to a temp file beside `target`, fsync it, then `os.replace` it into place.

    A reader sees the old file or the new one, never a half-written one; a crash leaves at most a stray
    `.tmp` file, never a truncated target.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    temp_name = temp_path(target)
    descriptor = os.open(temp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise


def atomic_write_text(target: Path, text: str) -> None:
    atomic_write_bytes(target, text.encode("utf-8"))


_libc = ctypes.CDLL(None, use_errno=True)
_syncfs = getattr(_libc, "syncfs", None)


def sync_filesystem(path: Path | str) -> None:
    """Make everything written on `path`'s file system durable (Linux `syncfs`; elsewhere `sync`).

    Only that file system is flushed, not every disk of the machine as `os.sync()` would.
    """
    if _syncfs is not None:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            if _syncfs(descriptor) == 0:
                return
        finally:
            os.close(descriptor)
    os.sync()


def close_all(descriptors: list[int]) -> None:
    """Close these (distinct, open) descriptors with one `close_range` per run of consecutive numbers
    instead of one `close` each: every number in such a run is one of them, so nothing else is closed."""
    ordered = sorted(descriptors)
    start = 0
    for end in range(1, len(ordered) + 1):
        if end == len(ordered) or ordered[end] != ordered[end - 1] + 1:
            os.closerange(ordered[start], ordered[end - 1] + 1)
            start = end


def reserve_descriptor_table(count: int) -> None:
    """Grow the process's descriptor table to at least `count` entries in one step. Left alone it doubles
    as descriptors are opened, and in a process with threads each doubling waits for an RCU grace period
    (10–15 ms on the benchmark machine; eviction's batches would pay four of them). Past the open-file
    limit nothing is reserved."""
    probe = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        high = fcntl.fcntl(probe, fcntl.F_DUPFD_CLOEXEC, count - 1)  # the lowest free number ≥ count - 1
    except OSError:
        return
    finally:
        os.close(probe)
    os.close(high)


class FolderDescriptors:
    """Open descriptors of folders, by path, so names resolve from them (`dir_fd`) instead of walking the
    whole path again (a rename by full path cost about a third more CPU). Paths resolve as before: a
    tier root may be a symlink.

    With `limit`, opening one more folder than that first closes all of them: for callers that use each
    descriptor at once and go through the files folder by folder."""

    def __init__(self, limit: int | None = None) -> None:
        self._open: dict[str, int] = {}
        self._limit = limit

    def get(self, folder: str) -> int:
        descriptor = self._open.get(folder)
        if descriptor is None:
            if self._limit is not None and len(self._open) >= self._limit:
                self.close()
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            self._open[folder] = descriptor
        return descriptor

    def close(self, together_with: list[int] | None = None) -> None:
        """Close every folder, and `together_with` (the caller's descriptors) in the same `close_all`."""
        close_all([*self._open.values(), *(together_with or ())])
        self._open.clear()


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_renameat2 = getattr(_libc, "renameat2", None)


def _rename_no_replace(source: Path | str, destination: Path | str) -> bool:
    """Linux `renameat2(RENAME_NOREPLACE)`: one atomic syscall that fails if `destination` exists.

    Returns False where the C library or the file system does not support it.
    """
    return rename_at_no_replace(_AT_FDCWD, source, _AT_FDCWD, destination, (source, destination))


def rename_at_no_replace(
    source_folder: int,
    source: Path | str,
    destination_folder: int,
    destination: Path | str,
    shown: tuple[Path | str, Path | str],
) -> bool:
    """`_rename_no_replace` with names relative to folder descriptors; `shown` (source, destination) name
    the files in errors. Resolving a bare name from its folder's descriptor skips the walk down a path."""
    if _renameat2 is None:
        return False
    if (
        _renameat2(
            source_folder,
            os.fsencode(source),
            destination_folder,
            os.fsencode(destination),
            _RENAME_NOREPLACE,
        )
        == 0
    ):
        return True
    code = ctypes.get_errno()
    if code == errno.EEXIST:
        raise DestinationExistsError(Path(shown[1]))
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(shown[0]))


def move_without_overwrite(source: Path | str, destination: Path | str) -> None:
    """Move a file; raise `DestinationExistsError` instead of replacing an existing destination.

    Atomic either way (no check-then-rename race): `renameat2(RENAME_NOREPLACE)` where available, else a
    hard link (which fails if the destination exists) and an unlink. The file keeps its inode and mtime
    (the reference's `copy2` + delete also kept the mtime).
    """
    if _rename_no_replace(source, destination):
        return
    try:
        os.link(source, destination)
    except FileExistsError:
        raise DestinationExistsError(Path(destination)) from None
    except OSError as error:
        if error.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
            raise
        # File systems without hard links: the store lock keeps this check-then-move safe between Strata processes.
        if os.path.lexists(destination):
            raise DestinationExistsError(Path(destination)) from None
        shutil.move(source, destination)
        return
    os.unlink(source)


@contextlib.contextmanager
def store_lock(lock_file: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock_file` (daemon, CLI and app serialise their writes on it)."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a+b") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusyError(lock_file, timeout) from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
