"""The explicit upgrade of a v1–v6 SQLite file to v7 (`stratagate migrate`, File > Upgrade to schema v7…).

A writable open keeps a v5/v6 file in its own schema (legacy.py); only this upgrades one, after which the
reference StrataGate refuses the file ("SQLite schema 7 is newer than supported schema 5"). Guarantees:

- the backup `FILE.bak-v<N>` is complete or absent: it is written as `FILE.bak-v<N>.partial` (SQLite's
  backup API when the WAL holds content, else a copy of the file's bytes) and renamed once whole; a
  `.partial` left by a killed run is removed by the next one;
- the backup is taken inside the upgrade's `BEGIN IMMEDIATE` transaction, so it is exactly the state that
  was upgraded, and a failed or killed upgrade leaves the file as it was;
- a file that cannot be upgraded (read-only file or folder, newer schema, not StrataGate) is refused with
  `StorageOpenError` before anything is written beside it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.exc import DBAPIError

from stratagate.errors import StorageOpenError
from stratagate.storage import files, migrations, schema
from stratagate.storage.sql import immediate_transaction, open_backend, set_wal, sqlite_engine

PARTIAL_SUFFIX = ".partial"
STEPS = ("backup", "upgrade")
"""What `progress` is called with, in order."""


@dataclass(frozen=True)
class UpgradeResult:
    from_version: int
    backup: Path | None
    """None when the file was already at schema 7."""


def backup_path(path: Path, version: int) -> Path:
    return path.with_name(f"{path.name}.bak-v{version}")


def upgrade_file(
    database: str | os.PathLike[str], *, timeout: float = 5.0, progress: Callable[[str], None] | None = None
) -> UpgradeResult:
    """Upgrade an SQLite file of schema 1–6 to 7 after a complete backup; a v7 file is left alone."""
    path = Path(database)
    location = str(path)
    files.read_header(path)  # a missing or foreign file is named as such before anything else
    _check_writable(path, location)
    with open_backend(path, create=False, timeout=timeout) as backend:  # every check a writable open makes
        version = backend.schema_version
        if version > schema.SCHEMA_VERSION:
            raise StorageOpenError(location, f"cannot be migrated: {backend.notice}")
    if version == schema.SCHEMA_VERSION:
        return UpgradeResult(version, None)
    backup = backup_path(path, version)
    engine = sqlite_engine(path, timeout)
    try:
        # The write lock is taken before the backup and held until the upgrade commits: no other writer (an
        # agent running the reference) can commit in between, so the backup is exactly what was upgraded.
        with immediate_transaction(engine) as connection:
            _write_backup(path, location, backup)
            if progress:
                progress("backup")
            migrations.upgrade(connection, version)
        set_wal(engine)
    except DBAPIError as error:  # nothing was committed: the file is as it was, the backup stays valid
        detail = str(error.orig).splitlines()[0] if error.orig else str(error)
        cause = "it is locked by another process" if "locked" in detail or "busy" in detail else "SQLite refused"
        raise StorageOpenError(location, f"cannot be migrated: {cause} ({detail}); nothing was changed") from error
    finally:
        engine.dispose()
    if progress:
        progress("upgrade")
    return UpgradeResult(version, backup)


def _write_backup(path: Path, location: str, backup: Path) -> None:
    """Write `backup` complete or not at all, while the caller holds the file's write lock.

    With no WAL content the database file alone is the whole database, and nobody can change it while the
    lock is held, so its bytes are copied (several times faster than SQLite's page-by-page backup); otherwise
    SQLite's backup API copies it with what its WAL holds."""
    partial = backup.with_name(backup.name + PARTIAL_SUFFIX)
    _remove_partial(partial)
    try:
        if files.has_live_wal(path):
            files.backup_database(path, partial)
        else:
            shutil.copyfile(path, partial)
        partial.replace(backup)
    except (OSError, sqlite3.Error) as error:
        _remove_partial(partial)
        raise StorageOpenError(
            location, f"cannot be migrated: the backup {backup} could not be written ({error})"
        ) from error


def _check_writable(path: Path, location: str) -> None:
    """The file must be writable, and its folder too (the backup and SQLite's WAL are created there)."""
    if not os.access(path, os.W_OK):
        raise StorageOpenError(location, "cannot be migrated: it is a read-only file")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StorageOpenError(
            location,
            f"cannot be migrated: its folder {path.parent} is read-only (the backup and SQLite's journal are "
            f"written there)",
        )


def _remove_partial(partial: Path) -> None:
    """A backup that was never completed, with the journal SQLite may have left beside it."""
    for leftover in (partial, partial.with_name(partial.name + "-journal")):
        leftover.unlink(missing_ok=True)
