"""SQLite files at rest: header checks, sha256, private forensic copies, backups.

Nothing here opens the original file with SQLite in a mode that could write: even a `mode=ro` connection
leaves `-wal` and `-shm` files beside a WAL-mode database. A forensic open reads a file at rest in SQLite's
`immutable=1` mode (no locks, no side files); a file with a WAL holding frames or a hot journal, or one
that needs an upgrade to be read, is copied (with its `-wal`/`-journal`, so committed WAL content is seen)
into a private temporary directory and opened there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stratagate.errors import StorageOpenError

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
COMPANION_SUFFIXES = ("-wal", "-journal")
"""Files SQLite reads beside a database; `-shm` is left out because SQLite rebuilds it from the `-wal`."""


@dataclass(frozen=True)
class SqliteHeader:
    page_size: int
    page_count: int | None
    """The in-header database size, when the header marks it valid."""
    user_version: int
    wal_mode: bool


def companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def has_live_wal(path: Path) -> bool:
    wal = companion(path, "-wal")
    return wal.is_file() and wal.stat().st_size > 0


def has_hot_journal(path: Path) -> bool:
    """A non-empty rollback journal: a crashed writer's pages that a reader must roll back first."""
    journal = companion(path, "-journal")
    return journal.is_file() and journal.stat().st_size > 0


def read_through_sqlite(path: Path) -> tuple[int, list[str]]:
    """`user_version` and table names as SQLite sees them, WAL content included. It connects normally, so
    only call it on a private copy: closing the last connection may checkpoint the WAL into the file."""
    connection = sqlite3.connect(path)
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return version, tables
    finally:
        connection.close()


NOT_REGULAR_KINDS = (
    (stat.S_ISDIR, "is a directory, not a database file"),
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a database file"),
    (stat.S_ISCHR, "is a character device, not a database file"),
    (stat.S_ISBLK, "is a block device, not a database file"),
    (stat.S_ISSOCK, "is a socket, not a database file"),
)


def regular_file_size(path: Path) -> int:
    """The size of `path` (symlinks followed), refusing anything but a regular file *before* it is opened:
    reading a FIFO blocks forever and `/dev/zero` never ends."""
    location = str(path)
    try:
        mode = path.stat()
    except FileNotFoundError:
        raise StorageOpenError(location, "no such file") from None
    except OSError as error:
        raise StorageOpenError(location, f"cannot be read ({error.strerror or error})") from error
    for is_kind, reason in NOT_REGULAR_KINDS:
        if is_kind(mode.st_mode):
            raise StorageOpenError(location, reason)
    if not stat.S_ISREG(mode.st_mode):
        raise StorageOpenError(location, "is not a regular file, not a database file")
    return mode.st_size


def read_header(path: Path) -> SqliteHeader:
    """Check that `path` is a whole SQLite database file without opening it; raise StorageOpenError if not."""
    location = str(path)
    size = regular_file_size(path)
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO after the check above, this read cannot hang.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            header = handle.read(HEADER_SIZE)
    except OSError as error:
        raise StorageOpenError(location, f"cannot be read ({error.strerror or error})") from error
    if size == 0:
        raise StorageOpenError(location, "is an empty file (0 bytes), not a StrataGate database")
    if not header.startswith(SQLITE_MAGIC):
        raise StorageOpenError(location, "is not an SQLite database (no SQLite header)")
    if len(header) < HEADER_SIZE:
        raise StorageOpenError(location, f"is truncated ({size} bytes, shorter than the SQLite header)")
    (raw_page_size,) = struct.unpack(">H", header[16:18])
    page_size = 65536 if raw_page_size == 1 else raw_page_size
    change_counter, page_count = struct.unpack(">II", header[24:32])
    (user_version,) = struct.unpack(">i", header[60:64])
    (valid_for,) = struct.unpack(">I", header[92:96])
    in_header_size_valid = page_count > 0 and valid_for == change_counter
    if page_size < 512 or page_size & (page_size - 1):
        raise StorageOpenError(location, f"has a corrupt SQLite header (page size {raw_page_size})")
    if not has_live_wal(path):
        expected = page_count * page_size if in_header_size_valid else page_size
        if size < expected:
            raise StorageOpenError(location, f"is truncated ({size} bytes; its header says {expected})")
    return SqliteHeader(
        page_size=page_size,
        page_count=page_count if in_header_size_valid else None,
        user_version=user_version,
        wal_mode=header[18] == 2 and header[19] == 2,
    )


def peek_table_names(path: Path) -> list[str]:
    """Table names of a database at rest, read with `immutable=1`, which creates no side files.

    Only valid when no live `-wal` exists (immutable ignores one)."""
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
        try:
            return [
                row[0]
                for row in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                )
            ]
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise StorageOpenError(str(path), f"is not a readable SQLite database ({error})") from error


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class ForensicCopy:
    """A private copy of a database (with its WAL) in a temporary directory that `cleanup` removes."""

    directory: Path
    database: Path
    sha256: str
    """Of the original database file, computed while copying it."""

    def cleanup(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def forensic_copy(path: Path) -> ForensicCopy:
    directory = Path(tempfile.mkdtemp(prefix="stratagate-forensic-"))
    database = directory / path.name
    digest = hashlib.sha256()
    try:
        with path.open("rb") as source, database.open("wb") as target:
            while block := source.read(1 << 20):
                digest.update(block)
                target.write(block)
        for suffix in COMPANION_SUFFIXES:
            if companion(path, suffix).is_file():
                shutil.copyfile(companion(path, suffix), companion(database, suffix))
    except OSError as error:
        shutil.rmtree(directory, ignore_errors=True)
        raise StorageOpenError(str(path), f"cannot be copied for a read-only open ({error})") from error
    return ForensicCopy(directory=directory, database=database, sha256=digest.hexdigest())


def backup_database(path: Path, target: Path) -> None:
    """Copy a live database to `target` with SQLite's backup API (includes content still in the WAL)."""
    target.unlink(missing_ok=True)
    source = sqlite3.connect(path)
    try:
        destination = sqlite3.connect(target)
        try:
            source.backup(destination)
        finally:
            destination.close()
    finally:
        source.close()
