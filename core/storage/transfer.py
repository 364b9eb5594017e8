"""Snapshot JSON files in and out of a database, and namespace copies between databases.

The file shape is the reference's: `{"<namespace>": {"snapshot": {...}, "revision": N}}` (a bare snapshot
object is accepted too when the namespace is given). Imports validate every namespace with
`normalize_snapshot` (any v1–v7 snapshot becomes v7) and check that none would be overwritten before
writing any; each namespace is then written in one transaction.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratagate.errors import NamespaceExistsError, SnapshotError
from stratagate.snapshot import normalize_snapshot
from stratagate.storage.sql import SNAPSHOT_SECTIONS, Progress, SqlBackend

SUMMARY_SECTIONS = ("blocks", "events", "elements", "openTail")
STEPS_PER_NAMESPACE = len(SNAPSHOT_SECTIONS)
"""Progress steps an export or an import reports for each namespace (one per section)."""


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


def export_snapshots(backend: SqlBackend, namespaces: list[str], progress: Progress | None = None) -> dict[str, Any]:
    return {namespace: backend.export_namespace(namespace, progress) for namespace in namespaces}


def write_json_atomically(data: Any, out: Path) -> None:
    """Write to a temp file beside `out`, then rename: `out` is either the old file or the whole new one."""
    handle, temp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, ensure_ascii=False, indent=2)
            stream.write("\n")
        os.replace(temp, out)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def read_snapshot_file(path: Path, namespace: str | None = None) -> dict[str, dict[str, Any]]:
    """The namespaces of a snapshot JSON file, each validated and upgraded to v7: ns → {snapshot, revision}."""
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
    result = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or "snapshot" not in entry:
            raise SnapshotError(f"{path}: namespace {name!r} must be an object with a 'snapshot'")
        revision = entry.get("revision", 1)
        if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
            raise SnapshotError(f"{path}: namespace {name!r}: revision must be a positive integer, got {revision!r}")
        try:
            snapshot = normalize_snapshot(entry["snapshot"])
        except SnapshotError as error:
            raise SnapshotError(f"{path}: namespace {name!r}: {error}") from error
        result[name] = {"snapshot": snapshot, "revision": revision}
    return result


def import_snapshots(
    backend: SqlBackend,
    entries: dict[str, dict[str, Any]],
    *,
    replace: bool = False,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Write validated namespaces; refuses, before writing any, to overwrite one unless `replace`."""
    if not replace:
        taken = sorted(set(entries) & set(backend.list_namespaces()))
        if taken:
            raise NamespaceExistsError(
                f"{backend.location}: namespace(s) {', '.join(taken)} already exist; pass --replace to overwrite"
            )
    for namespace, entry in entries.items():
        backend.import_namespace(
            namespace, entry["snapshot"], entry["revision"], replace=replace, progress=progress
        )


def copy_namespaces(
    source: SqlBackend,
    target: SqlBackend,
    namespaces: list[str],
    *,
    replace: bool = False,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Copy namespaces losslessly (records, revision) from one database to another, e.g. SQLite → PostgreSQL."""
    entries = export_snapshots(source, namespaces, progress)
    import_snapshots(target, entries, replace=replace, progress=progress)
