"""A new SQLite database file appears under its name whole, or not at all.

SQLite creates the file empty when it connects and writes the schema at the first commit. A process killed
in between (a `copy` or an `import` into a new file, interrupted) left a 0-byte file under the name, which
every later open refuses ("an empty file, not a StrataGate database"), so the user's rerun failed. The
schema is now made in a hidden file beside the target, synced, and linked to the target's name, which fails
if the name was taken meanwhile; a killed creation leaves only that hidden file, which the next creation in
the folder removes once its process is gone.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from stratagate.errors import StorageOpenError
from stratagate.storage.processes import process_exists

_MARK = ".creating-"
_SIDE_FILES = ("", "-journal", "-wal", "-shm")


def create_whole(path: Path, make_schema: Callable[[Path], None]) -> None:
    """Create the database `path` (which must not exist): `make_schema(staging)` builds it in a hidden file
    of the same folder and closes it; the file is then synced and linked to `path`."""
    _remove_abandoned(path)
    staging = path.with_name(f".{path.name}{_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        make_schema(staging)
        _checkpoint(staging)
        _sync(staging)
        try:
            os.link(staging, path)
        except FileExistsError:
            raise StorageOpenError(str(path), "was created by another process while this one created it") from None
        except OSError:  # a file system without hard links: a rename, after checking the name is still free
            if path.exists() or path.is_symlink():
                raise StorageOpenError(str(path), "was created by another process while this one created it") from None
            os.rename(staging, path)
        _sync_folder(path.parent)
    finally:
        for suffix in _SIDE_FILES:
            Path(f"{staging}{suffix}").unlink(missing_ok=True)


def _remove_abandoned(path: Path) -> None:
    """Staging files of `path` whose creating process is gone (killed while it created the database)."""
    prefix = f".{path.name}{_MARK}"
    try:
        names = [entry.name for entry in os.scandir(path.parent) if entry.name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix):].split("-", 1)[0]
        if pid_text.isdigit() and not process_exists(int(pid_text)):
            (path.parent / name).unlink(missing_ok=True)



def _checkpoint(staging: Path) -> None:
    """Everything committed in the staging file's WAL moved into the file itself: only the file is linked."""
    with closing(sqlite3.connect(staging)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = Path(f"{staging}-wal")
    if wal.exists() and wal.stat().st_size:
        raise StorageOpenError(str(staging), "its new schema could not be moved out of its write-ahead log")


def _sync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sync_folder(folder: Path) -> None:
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
