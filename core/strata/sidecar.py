"""`stratum_2_access.json`: access counts and last-access times of cooled files (the LRU / promotion data).

Same JSON as the reference (`{path: {"access_count": int, "last_accessed": epoch seconds}}`, 2-space
indent). Differences: it is loaded once, changed in memory and written once per operation, atomically,
under the store lock (the reference rewrote it per file without a lock: O(N²) and lost updates, P-1, B-10);
keys are canonical paths; a damaged file is reported, never silently reset.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stratagate.strata.archive import quote
from stratagate.strata.errors import CorruptSidecarError, UnsafePathError
from stratagate.strata.fsutil import atomic_write_text
from stratagate.strata.paths import canonical_relative_path

SIDECAR_FILE = "stratum_2_access.json"


@dataclass(frozen=True, slots=True)
class AccessRecord:
    access_count: int
    last_accessed: float


def parse_record(file: Path, key: str, value: object) -> AccessRecord:
    if not isinstance(value, dict):
        raise CorruptSidecarError(file, f"entry {key!r} is not an object")
    count, last = value.get("access_count"), value.get("last_accessed")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise CorruptSidecarError(file, f"entry {key!r}: access_count must be a non-negative integer")
    if isinstance(last, bool) or not isinstance(last, int | float) or not math.isfinite(last):
        raise CorruptSidecarError(file, f"entry {key!r}: last_accessed must be a number")
    return AccessRecord(count, float(last))


def parse_sidecar(file: Path, text: str) -> dict[str, AccessRecord]:
    """Records by canonical path; duplicate spellings of one path are merged (counts add up)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CorruptSidecarError(file, f"invalid JSON: {error}") from error
    if not isinstance(data, dict):
        raise CorruptSidecarError(file, "the top level is not a JSON object")
    records: dict[str, AccessRecord] = {}
    for key, value in data.items():
        record = parse_record(file, key, value)
        try:
            path = canonical_relative_path(key)
        except UnsafePathError as error:
            raise CorruptSidecarError(file, f"entry {key!r}: {error}") from error
        if path in records:
            earlier = records[path]
            record = AccessRecord(
                earlier.access_count + record.access_count, max(earlier.last_accessed, record.last_accessed)
            )
        records[path] = record
    return records


def encode_records(records: dict[str, AccessRecord]) -> str:
    """Exactly `json.dumps(..., indent=2)` of the sidecar object, without the slow pure-Python indent encoder."""
    if not records:
        return "{}"
    entries = (
        f'  {quote(path)}: {{\n    "access_count": {record.access_count},\n'
        f'    "last_accessed": {float.__repr__(record.last_accessed)}\n  }}'
        for path, record in records.items()
    )
    return "{\n" + ",\n".join(entries) + "\n}"


class AccessSidecar:
    """The sidecar loaded into memory; call `save()` once after a batch of changes."""

    def __init__(
        self,
        file: Path,
        records: dict[str, AccessRecord] | None = None,
        dirty: bool = True,
        on_save: Callable[[dict[str, AccessRecord]], None] | None = None,
    ):
        """Load `file`, or start from `records` (written by `save()` unless `dirty=False` says they are
        the file's current content). `on_save` is told the records each time they were written."""
        self.file = file
        self.records: dict[str, AccessRecord] = records if records is not None else {}
        self._dirty = records is not None and dirty
        self._on_save = on_save
        self._fresh: AccessRecord | None = None  # the last record `start_tracking` made
        if records is None and file.exists():
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError as error:
                raise CorruptSidecarError(file, "not UTF-8 text") from error
            self.records = parse_sidecar(file, text)

    def get(self, path: str) -> AccessRecord | None:
        return self.records.get(path)

    def start_tracking(self, path: str, now: float) -> None:
        record = self._fresh
        if record is None or record.last_accessed != now:
            # Records are immutable: a migration's files share the one record of its `now`.
            record = self._fresh = AccessRecord(0, float(now))
        self.records[path] = record
        self._dirty = True

    def record_access(self, path: str, now: float) -> AccessRecord:
        record = self.records.get(path) or AccessRecord(0, 0.0)
        record = AccessRecord(record.access_count + 1, float(now))
        self.records[path] = record
        self._dirty = True
        return record

    def forget(self, path: str) -> None:
        if self.records.pop(path, None) is not None:
            self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        atomic_write_text(self.file, encode_records(self.records))
        self._dirty = False
        if self._on_save is not None:
            self._on_save(self.records)
