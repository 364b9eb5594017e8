"""Finishing a rehydration a dead process left half-done.

Restoring a file writes it into its tier first and then drops its shadow row and blob. A process killed in
between left the file twice (restored, and still archived) until someone rehydrated it again. Before
restoring, `apply_rehydrate` lists the shadow ids it is about to restore in `strata_rehydrate.journal`
(fsync'd) and removes the list when done; whoever takes the store lock next finds a leftover list and,
for each listed row whose restored file holds exactly the blob's content, drops the row and the blob.
A restored file that differs (edited since) is left alone with its archive: nothing is ever deleted that
is not also on disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from stat import S_ISREG

from stratagate.strata.archive import read_blob
from stratagate.strata.errors import StrataError
from stratagate.strata.fsutil import atomic_write_text
from stratagate.strata.paths import inside_tier
from stratagate.strata.shadow import ShadowIndex

JOURNAL_FILE = "strata_rehydrate.journal"


def write_journal(journal: Path, entries: list[tuple[str, Path]]) -> None:
    """(shadow id, tier root the file is restored into) per file about to be restored."""
    atomic_write_text(journal, json.dumps([[entry_id, str(root)] for entry_id, root in entries]))


def holds_exactly(destination: Path, content: str) -> bool:
    """Whether `destination` is a regular file (not a link) whose bytes are exactly `content` in UTF-8."""
    try:
        if not S_ISREG(os.lstat(destination).st_mode):
            return False
        return destination.read_bytes() == content.encode("utf-8")
    except OSError:
        return False


def finish_interrupted_rehydration(journal: Path, archive_root: Path, shadow: ShadowIndex) -> int:
    """Drop the rows and blobs of files a dead rehydration had already restored; returns how many."""
    try:
        listed = [(str(entry_id), Path(root)) for entry_id, root in json.loads(journal.read_text("utf-8"))]
    except (OSError, ValueError, TypeError) as error:
        raise StrataError(f"{journal}: damaged rehydration journal ({error}); remove it to go on") from error
    finished = 0
    for entry_id, root in listed:
        entry = shadow.find(entry_id)
        if entry is None or entry.id != entry_id:
            continue
        blob_file = archive_root / Path(entry.archive_path.replace("\\", "/")).name
        try:
            blob = read_blob(blob_file)
            restored = inside_tier(root, blob.original_path)
        except StrataError:
            continue
        if holds_exactly(restored, blob.content):
            shadow.remove([entry.id])
            blob_file.unlink(missing_ok=True)
            finished += 1
    journal.unlink()
    return finished
