"""Explicit repairs: rebuild the access sidecar (keeping a backup) and the shadow index (from the blobs)."""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from stratagate.strata.archive import PREVIEW_CHARS, read_blob
from stratagate.strata.errors import CorruptSidecarError, StrataError, UnsafePathError
from stratagate.strata.fsutil import atomic_write_bytes, sibling_name
from stratagate.strata.janitor import Progress
from stratagate.strata.paths import canonical_relative_path
from stratagate.strata.shadow import ShadowEntry, ShadowIndex
from stratagate.strata.sidecar import AccessRecord, AccessSidecar, parse_record
from stratagate.strata.store import StrataStore, walk_files


def _backup_name(file: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return file.with_name(sibling_name(file.name, f".bak-{stamp}-{uuid.uuid4().hex[:6]}"))


@dataclass
class SidecarRepair:
    backup: Path | None
    kept: int = 0
    dropped: list[str] = field(default_factory=list)


# One sidecar entry, wherever it stands in a damaged file: `"path": {"access_count": N, "last_accessed": T}`
# (either field first, any whitespace — the reference's indented layout spreads it over four lines).
_KEY = r'"((?:[^"\\\n]|\\.)*)"\s*:\s*\{\s*'
_COUNT = r'"access_count"\s*:\s*(\d+)'
_LAST = r'"last_accessed"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)'
_ENTRY = re.compile(f"{_KEY}(?:{_COUNT}\\s*,\\s*{_LAST}|{_LAST}\\s*,\\s*{_COUNT})\\s*\\}}")


def salvage_entries(text: str) -> dict[str, object]:
    """Every complete entry that can still be read from a sidecar that is not valid JSON any more
    (truncated by a crash, garbage written into it): later entries of the same key win, as in JSON."""
    entries: dict[str, object] = {}
    for found in _ENTRY.finditer(text):
        try:
            key = json.loads(f'"{found.group(1)}"')
        except json.JSONDecodeError:
            continue
        count = found.group(2) or found.group(5)
        last = found.group(3) or found.group(4)
        entries[key] = {"access_count": int(count), "last_accessed": float(last)}
    return entries


def repair_sidecar(store: StrataStore) -> SidecarRepair:
    """Keep every valid entry of a cooled file, drop the rest (listed), back up the old file first.

    A file that is not JSON at all keeps every entry that can still be read from it (`salvage_entries`).
    """
    with store.lock():
        file = store.sidecar_file
        if not file.exists():
            return SidecarRepair(None)
        raw = file.read_bytes()
        backup = _backup_name(file)
        atomic_write_bytes(backup, raw)
        text = raw.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        report = SidecarRepair(backup)
        if not isinstance(data, dict):
            data = salvage_entries(text)
        cooled = {relative for relative, _entry in walk_files(store.cooled_root)}
        sidecar = AccessSidecar(file, records={})
        for key, value in data.items():
            try:
                record = parse_record(file, key, value)
                path = canonical_relative_path(key)
            except (CorruptSidecarError, UnsafePathError):
                report.dropped.append(key)
                continue
            if path not in cooled:
                report.dropped.append(key)
                continue
            earlier = sidecar.records.get(path)
            if earlier:
                record = AccessRecord(
                    earlier.access_count + record.access_count,
                    max(earlier.last_accessed, record.last_accessed),
                )
            sidecar.records[path] = record
        report.kept = len(sidecar.records)
        sidecar.save()
        return report


@dataclass
class IndexRebuild:
    backup: Path | None
    indexed: int = 0
    unreadable: list[str] = field(default_factory=list)


def rebuild_shadow_index(store: StrataStore, progress: Progress | None = None) -> IndexRebuild:
    """Move the old database aside and index every readable blob of `archive/` into a fresh one."""
    with store.lock(recover=False):
        if store.evict_journal_file.exists():
            store.finish_interrupted_eviction(rebuild_shadow=True)
        file = store.shadow_file
        backup = None
        if file.exists():
            backup = _backup_name(file)
            os.replace(file, backup)
        Path(f"{file}-journal").unlink(missing_ok=True)
        report = IndexRebuild(backup)
        entries = []
        blobs = sorted(store.archive_root.glob("*.json")) if store.archive_root.is_dir() else []
        for blob_path in blobs:
            try:
                blob = read_blob(blob_path)
            except StrataError as error:
                report.unreadable.append(str(error))
            else:
                archived_at = (
                    blob.archived_at or datetime.fromtimestamp(blob_path.stat().st_mtime, UTC).isoformat()
                )
                entry_id = blob_path.stem if _is_uuid(blob_path.stem) else str(uuid.uuid4())
                entries.append(
                    ShadowEntry(
                        entry_id,
                        blob.original_path,
                        blob.tags,
                        str(blob_path),
                        blob.content[:PREVIEW_CHARS],
                        archived_at,
                    )
                )
            if progress:
                progress(1)
        shadow = ShadowIndex(file)
        try:
            shadow.add(entries)
        finally:
            shadow.close()
        report.indexed = len(entries)
        return report


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
