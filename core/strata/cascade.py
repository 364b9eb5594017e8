"""Reading a path through the tiers, as the reference's `Strata.read` does.

Active first (no side effects); then cooled (counts an access and, at `promotion_threshold`, promotes the
file to active); then the archive (rehydrates the newest archive of that path into active). With
`record_access=False` (the app's preview) nothing is counted or moved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from stratagate.strata import janitor
from stratagate.strata.archive import read_blob
from stratagate.strata.errors import StrataError, StrataFileNotFoundError
from stratagate.strata.paths import canonical_relative_path
from stratagate.strata.store import StrataStore, Tier


@dataclass(frozen=True)
class ReadResult:
    path: str
    content: str
    source: Tier
    access_count: int | None = None
    promoted: bool = False
    rehydrated: bool = False


def read(store: StrataStore, path: str, record_access: bool = True) -> ReadResult:
    relative = canonical_relative_path(path)
    limit = store.config.max_archive_bytes
    if store.file_path(Tier.ACTIVE, relative).is_file():
        return ReadResult(relative, store.read_text(Tier.ACTIVE, relative, limit), Tier.ACTIVE)
    if store.file_path(Tier.COOLED, relative).is_file():
        return _read_cooled(store, relative, record_access)
    shadow = store.shadow(create=False)
    try:
        entry = shadow.find(relative)
    finally:
        shadow.close()
    if entry is None:
        raise StrataFileNotFoundError(relative)
    if not record_access:
        return ReadResult(relative, read_blob(janitor.blob_file(store, entry)).content, Tier.ARCHIVE)
    results = janitor.apply_rehydrate(store, janitor.plan_rehydrate(store, [entry.id], Tier.ACTIVE))
    failed = [result for result in results if result.status != "rehydrated"]
    if failed:
        raise StrataError(f"{relative}: could not restore from the archive: {failed[0].detail}")
    return ReadResult(relative, store.read_text(Tier.ACTIVE, relative, limit), Tier.ARCHIVE, rehydrated=True)


def _read_cooled(store: StrataStore, relative: str, record_access: bool) -> ReadResult:
    content = store.read_text(Tier.COOLED, relative, store.config.max_archive_bytes)
    if not record_access:
        record = store.sidecar().get(relative)
        return ReadResult(relative, content, Tier.COOLED, record.access_count if record else 0)
    with store.lock():
        sidecar = store.sidecar()
        count = sidecar.record_access(relative, time.time()).access_count
        sidecar.save()
        if count < store.config.promotion_threshold:
            return ReadResult(relative, content, Tier.COOLED, count)
        results = janitor.apply_promote(store, janitor.plan_promote(store, [relative]))
    return ReadResult(relative, content, Tier.COOLED, count, promoted=results[0].status == "promoted")
