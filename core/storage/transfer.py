"""Snapshot JSON files in and out of a database, and namespace copies between databases.

The file shape is the reference's: `{"<namespace>": {"snapshot": {...}, "revision": N}}` (a bare snapshot
object is accepted too when the namespace is given), plus `"journal": [...]` when the namespace has a
curation journal: its entries as `stratagate journal export` writes them, hashes unchanged, so
`journal verify` passes on the database it is imported into.

- Exports and copies stream: each section is read `TRANSFER_CHUNK` records at a time inside one read
  transaction, and each chunk is written (to the file, or to the target database) before the next is read,
  so memory stays flat however large the memory is.
- Imports validate every namespace as `normalize_snapshot` does (any v1–v7 snapshot becomes v7) before writing
  any: a file laid out as exports are is checked in a first streamed pass and its records are read again, a
  chunk at a time, while they are written (`snapshot_stream`); another is read whole. Imports and copies write
  every namespace in one transaction: all or nothing, so a failed run leaves nothing behind and can simply be
  run again.
- Text holding NUL (U+0000) is refused wherever it would enter a database that cannot store it (see
  docs/compatibility.md): in snapshot files, and in copies to PostgreSQL, naming the record and field.
- An output path that is (or resolves to, or is a hard link of) an input database or one of its side files
  is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy import Connection
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from stratagate.errors import NamespaceExistsError, OutputPathError, SnapshotError, StrataGateError
from stratagate.journal import (
    JournalEntryError,
    JournalRecord,
    iter_entries,
    restore_entries,
)
from stratagate.snapshot import normalize_snapshot
from stratagate.storage import schema, snapshot_stream
from stratagate.storage.files import companion
from stratagate.storage.processes import process_exists
from stratagate.storage.sql import IMPORT_ORDER, SNAPSHOT_SECTIONS, Progress, SqlBackend
from stratagate.validation import NUL, find_nul

SUMMARY_SECTIONS = ("blocks", "events", "elements", "openTail")
STEPS_PER_NAMESPACE = len(SNAPSHOT_SECTIONS)
"""Progress steps an export, import or copy reports for each namespace (one per section)."""
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")
SQLITE_TRANSFER_CACHE_KIB = 65_536
"""SQLite page cache of a copy's or import's write transaction: with the default 2 MB, a 100k-event copy spills
and rereads its growing indexes (176 s); 64 MB took 97 s at a 252 MiB peak, within the 300 MB budget."""
PARTIAL_SUFFIX = ".partial"


@dataclass(frozen=True)
class NamespaceSummary:
    namespace: str
    revision: int
    current_turn: int
    counts: dict[str, int]


def summarize(backend: SqlBackend, namespace: str) -> NamespaceSummary:
    """Revision, turn and record counts, listing keys only (cheap even for 100k events)."""
    space = backend.load_space(namespace)
    if space is None:
        raise SnapshotError(f"{backend.location}: no namespace {namespace!r} (has: {backend.list_namespaces()})")
    counts = {section: backend.count(namespace, section) for section in SUMMARY_SECTIONS}
    return NamespaceSummary(namespace, space["revision"], space["currentTurn"], counts)


def select_namespaces(backend: SqlBackend, namespace: str | None) -> list[str]:
    available = backend.list_namespaces()
    if namespace is None:
        return available
    if namespace not in available:
        raise SnapshotError(f"{backend.location}: no namespace {namespace!r} (has: {', '.join(available) or 'none'})")
    return [namespace]


# -- outputs that would overwrite inputs ---------------------------------------------------------------------


def refuse_overwriting_inputs(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse an output (a file, or a target database) that is one of the input databases or their side
    files, by path, by symlink or by hard link; or, for servers, the same database."""
    output_text = os.fspath(output)
    for source in map(os.fspath, inputs):
        if _server_identity(output_text) is not None and _server_identity(output_text) == _server_identity(source):
            raise OutputPathError(f"{output_text}: is the input database itself; choose another target")
        for written in _database_files(output_text):
            for read in _database_files(source):
                if _same_file(written, read):
                    what = "the input database" if read == _database_files(source)[0] else f"the input's {read.name}"
                    raise OutputPathError(f"{written}: is {what} ({source}); choose another output path")


def _database_files(database: str) -> list[Path]:
    """The files an SQLite database lives in (none for a server URL)."""
    if "://" in database:
        try:
            url = make_url(database)
        except ArgumentError:
            return []
        if url.get_backend_name() != "sqlite" or not url.database:
            return []
        database = url.database
    path = Path(database)
    return [path, *(companion(path, suffix) for suffix in SIDE_FILE_SUFFIXES)]


def _server_identity(database: str) -> tuple[Any, ...] | None:
    if "://" not in database:
        return None
    try:
        url = make_url(database)
    except ArgumentError:
        return None
    if url.get_backend_name() == "sqlite":
        return None
    return url.get_backend_name(), url.host, url.port, url.database


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where the paths lead
        return os.path.realpath(a) == os.path.realpath(b)


# -- export ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Object:
    """A JSON object whose members are produced while it is written (values may be record iterators)."""

    members: Iterable[tuple[str, Any]]


def write_export(backend: SqlBackend, namespaces: list[str], stream: TextIO, progress: Progress | None = None) -> None:
    """Write the export JSON of `namespaces` to `stream`, laid out as `json.dump(..., indent=2)` would lay it
    out, reading one consistent view of the database a chunk at a time."""
    with backend.read_transaction() as connection:
        members = ((name, _Object(_namespace_members(backend, connection, name, progress))) for name in namespaces)
        _write_json(stream, _Object(members), 0)
    stream.write("\n")


def _namespace_members(
    backend: SqlBackend, connection: Connection, namespace: str, progress: Progress | None
) -> Iterator[tuple[str, Any]]:
    space = backend.read_space(connection, namespace)
    header = {
        "schemaVersion": schema.SCHEMA_VERSION,
        "currentTurn": space["currentTurn"],
        "blockTurnSize": space["blockTurnSize"],
        "blockDecayLambda": space["blockDecayLambda"],
    }
    sections = (
        (section, _reported(backend.iter_section(connection, namespace, section), section, progress))
        for section in SNAPSHOT_SECTIONS
    )
    yield "snapshot", _Object(chain(header.items(), sections))
    yield "revision", space["revision"]
    journal = iter_entries(connection, namespace)
    first = next(journal, None)
    if first is not None:  # a namespace without a journal exports exactly as before
        yield "journal", (record.to_json() for record in chain([first], journal))


def _reported(chunks: Iterator[list[Any]], section: str, progress: Progress | None) -> Iterator[Any]:
    for chunk in chunks:
        yield from chunk
    if progress:
        progress(section)


def _write_json(stream: TextIO, value: Any, level: int) -> None:
    if isinstance(value, _Object):
        _write_container(stream, ((f"{json.dumps(k, ensure_ascii=False)}: ", v) for k, v in value.members), level, "{}")
    elif isinstance(value, Iterator):
        _write_container(stream, (("", item) for item in value), level, "[]")
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2)
        stream.write(text.replace("\n", "\n" + "  " * level))


def _write_container(stream: TextIO, members: Iterable[tuple[str, Any]], level: int, brackets: str) -> None:
    opened = False
    for prefix, value in members:
        stream.write(",\n" if opened else brackets[0] + "\n")
        opened = True
        stream.write("  " * (level + 1) + prefix)
        _write_json(stream, value, level + 1)
    stream.write("\n" + "  " * level + brackets[1] if opened else brackets)


def export_to_file(backend: SqlBackend, namespaces: list[str], out: Path, progress: Progress | None = None) -> None:
    """Write the export to a temp file beside `out` (created with the usual umask mode), then rename it: `out`
    is either the old file or the whole new one. Temp files that killed exports left behind are removed."""
    folder = out.parent
    if not folder.is_dir():
        raise OutputPathError(f"{out}: its folder {folder} does not exist")
    if out.exists() and not stat.S_ISREG(out.stat().st_mode):
        raise OutputPathError(f"{out}: is not a regular file; write the export to a file (or to stdout without -o)")
    remove_stale_partials(out)
    temp = partial_path(out, os.getpid())
    try:
        temp.unlink(missing_ok=True)  # left by a dead process that had our pid
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        raise OutputPathError(f"{out}: cannot be written ({error.strerror or error})") from error
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            write_export(backend, namespaces, stream, progress)
        os.replace(temp, out)
    except OSError as error:
        temp.unlink(missing_ok=True)
        raise OutputPathError(f"{out}: cannot be written ({error.strerror or error})") from error
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def partial_path(out: Path, pid: int) -> Path:
    """Where the export to `out` by process `pid` is written before it is renamed into place."""
    return out.with_name(f".{out.name}.{pid}{PARTIAL_SUFFIX}")


def remove_stale_partials(out: Path) -> None:
    """Remove the temp files of exports to `out` whose process is gone (killed before it could clean up)."""
    for candidate in out.parent.glob(f".{out.name}.*{PARTIAL_SUFFIX}"):
        pid_text = candidate.name[len(out.name) + 2 : -len(PARTIAL_SUFFIX)]
        if pid_text.isdigit() and not process_exists(int(pid_text)):
            candidate.unlink(missing_ok=True)



# -- import ----------------------------------------------------------------------------------------------------


def read_snapshot_file(path: Path, namespace: str | None = None) -> Mapping[str, dict[str, Any]]:
    """The namespaces of a snapshot JSON file, each validated (and upgraded to v7): ns → {revision, journal (a
    list of JournalRecord, possibly empty), and the snapshot}. A file laid out as exports are is checked as a
    stream and its records are read again when imported (`snapshot_stream`); any other is read whole."""
    streamed = snapshot_stream.scan(path, namespace)
    if streamed is not None:
        return streamed
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SnapshotError(f"{path}: cannot be read ({error.strerror or error})") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SnapshotError(f"{path}: not a JSON snapshot file ({error})") from error
    except RecursionError:
        raise SnapshotError(f"{path}: not a JSON snapshot file (nested too deeply to read)") from None
    if isinstance(data, dict) and "schemaVersion" in data:
        if namespace is None:
            raise SnapshotError(f"{path}: holds a bare snapshot; name its namespace")
        data = {namespace: {"snapshot": data, "revision": 1}}
    if not isinstance(data, dict) or not data:
        raise SnapshotError(f'{path}: expected {{"<namespace>": {{"snapshot": ..., "revision": N}}}}')
    if namespace is not None:
        if namespace not in data:
            raise SnapshotError(f"{path}: no namespace {namespace!r} (has: {', '.join(data)})")
        data = {namespace: data[namespace]}
    return {name: _read_entry(path, name, entry) for name, entry in data.items()}


def _read_entry(path: Path, name: str, entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict) or "snapshot" not in entry:
        raise SnapshotError(f"{path}: namespace {name!r} must be an object with a 'snapshot'")
    if NUL in name:
        raise SnapshotError(f"{path}: namespace {name!r} contains a NUL character (U+0000), which StrataGate does not store")
    revision = snapshot_stream.entry_revision(path, name, entry)
    try:
        snapshot = normalize_snapshot(entry["snapshot"])
    except SnapshotError as error:
        raise SnapshotError(f"{path}: namespace {name!r}: {error}") from error
    where = find_nul(snapshot)
    if where is not None:
        raise SnapshotError(
            f"{path}: namespace {name!r}: {where} contains a NUL character (U+0000), which StrataGate does not store"
        )
    records = snapshot_stream.entry_journal(path, name, entry)
    return {"snapshot": snapshot, "revision": revision, "journal": records}


def import_snapshots(
    backend: SqlBackend,
    entries: Mapping[str, dict[str, Any]],
    *,
    replace: bool = False,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Write validated namespaces (and their journals) in one transaction; refuses, before writing any, to
    overwrite one unless `replace` (a replaced namespace's journal is replaced by the imported one)."""
    _refuse_taken(backend, list(entries), replace)
    with backend.write_transaction(", ".join(entries)) as connection, _large_cache(connection):
        for namespace, space, sections in _namespaces(entries):
            entry = entries[namespace]
            backend.start_namespace(connection, namespace, space, entry["revision"], replace=replace)
            for section, chunks in sections:
                for chunk in chunks:
                    backend.write_records(connection, namespace, section, chunk)
                if progress:
                    progress(section)
            backend.finish_namespace(connection, namespace)
            _write_journal(backend, connection, namespace, entry.get("journal", []), replace)


def _namespaces(entries: Mapping[str, dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], Iterator[Any]]]:
    """(namespace, space fields, its sections as (section, record chunks)), streamed or from whole snapshots."""
    if isinstance(entries, snapshot_stream.StreamedFile):
        yield from entries.replay()
        return
    for namespace, entry in entries.items():
        snapshot = entry["snapshot"]
        yield namespace, snapshot, ((section, iter([snapshot[section]])) for section in IMPORT_ORDER)


@contextmanager
def _large_cache(connection: Connection) -> Iterator[None]:
    """A larger SQLite page cache for one bulk write transaction, set back before the connection is reused."""
    if connection.dialect.name != "sqlite":
        yield
        return
    previous = connection.exec_driver_sql("PRAGMA cache_size").scalar_one()
    connection.exec_driver_sql(f"PRAGMA cache_size = -{SQLITE_TRANSFER_CACHE_KIB}")
    try:
        yield
    finally:
        connection.exec_driver_sql(f"PRAGMA cache_size = {int(previous)}")


def _refuse_taken(backend: SqlBackend, namespaces: list[str], replace: bool) -> None:
    if not replace:
        taken = sorted(set(namespaces) & set(backend.list_namespaces()))
        if taken:
            raise NamespaceExistsError(
                f"{backend.location}: namespace(s) {', '.join(taken)} already exist; pass --replace to overwrite"
            )


def _write_journal(
    backend: SqlBackend, connection: Connection, namespace: str, records: list[JournalRecord], replace: bool
) -> None:
    if not records and not replace:
        return
    try:
        restore_entries(connection, namespace, records)
    except JournalEntryError as error:
        raise SnapshotError(f"{backend.location}: {error}; nothing was written") from error


# -- copy ------------------------------------------------------------------------------------------------------


def copy_namespaces(
    source: SqlBackend,
    target: SqlBackend,
    namespaces: list[str],
    *,
    replace: bool = False,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Copy namespaces losslessly (records, revision, curation journal) from one database to another, e.g.
    SQLite → PostgreSQL: streamed chunk by chunk, all in one target transaction (all or nothing)."""
    _refuse_taken(target, namespaces, replace)
    check_nul = target.dialect == "postgresql"
    with (
        source.read_transaction() as origin,
        target.write_transaction(", ".join(namespaces)) as destination,
        _large_cache(destination),
    ):
        for namespace in namespaces:
            if check_nul and NUL in namespace:
                raise _nul_refused(source, namespace, "the namespace name")
            space = source.read_space(origin, namespace)
            target.start_namespace(destination, namespace, space, space["revision"], replace=replace)
            for section in IMPORT_ORDER:
                for chunk in source.iter_section(origin, namespace, section):
                    if check_nul:
                        _refuse_nul(source, namespace, section, chunk)
                    target.write_records(destination, namespace, section, chunk)
                if progress:
                    progress(section)
            target.finish_namespace(destination, namespace)
            journal = list(iter_entries(origin, namespace))
            if check_nul:
                _refuse_nul(source, namespace, "journal", [record.to_json() for record in journal])
            _write_journal(target, destination, namespace, journal, replace)


def _refuse_nul(source: SqlBackend, namespace: str, section: str, records: list[dict[str, Any]]) -> None:
    # json.dumps escapes NUL as \u0000: a cheap scan of the chunk, then the exact place when it matches.
    if "\\u0000" not in json.dumps(records, ensure_ascii=False):
        return
    for index, record in enumerate(records):
        where = find_nul(record)
        if where is not None:
            key = record.get("id", record.get("blockId", record.get("seq", index)))
            raise _nul_refused(source, namespace, f"{section} record {key!r} field {where}")


def _nul_refused(source: SqlBackend, namespace: str, where: str) -> StrataGateError:
    return SnapshotError(
        f"{source.location}: namespace {namespace!r}: {where} contains a NUL character (U+0000), which "
        "PostgreSQL cannot store; nothing was copied (see docs/compatibility.md)"
    )
