"""Crash-safe batch eviction without creating a new file per blob.

Creating a file (a new inode) is the slow part of archiving (≈1 ms per file on the benchmark machine,
against ≈20 µs for a rename), so eviction turns each cooled file *into* its blob: it renames the file into
`archive/` and rewrites it there with the blob JSON. The rename comes first so editors lose the name; a file
whose (inode, size, mtime) changed since it was read goes back to cooled untouched and is skipped this cycle. To lose nothing if the process dies half-way, every
blob of the batch is first written to one journal file (`strata_evict.journal`, fsync'd); the journal is
removed only after the blobs are synced and the shadow rows committed. Whoever takes the store lock next
finds a leftover journal and finishes the batch from it (`finish_interrupted_eviction`).

Journal format: a `STRATA-EVICT-JOURNAL 1` line, then per blob a JSON header line `{"id", "path",
"length"}` followed by `length` bytes of blob JSON and a newline, then an `END` line. A journal without
`END` was never completed, so no cooled file had been touched yet: it is simply discarded.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from stratagate.strata.archive import PREVIEW_CHARS, quote, read_blob
from stratagate.strata.errors import DestinationExistsError, StrataError, UnsafePathError
from stratagate.strata.fsutil import atomic_write_bytes, move_without_overwrite, sibling_name, sync_filesystem
from stratagate.strata.paths import canonical_relative_path
from stratagate.strata.shadow import ShadowEntry, ShadowIndex

JOURNAL_FILE = "strata_evict.journal"
_MAGIC = b"STRATA-EVICT-JOURNAL 1\n"
_END = b"END\n"


@dataclass(frozen=True)
class StagedBlob:
    """A cooled file about to be archived: its blob bytes and shadow row, ready before anything moves."""

    id: str
    path: str
    source: str
    version: tuple[int, int, int]  # (inode, size, mtime) when it was read
    descriptor: int  # the file, opened for reading and writing when it was read; -1 when closed
    blob_file: str
    blob: bytes
    entry: ShadowEntry
    in_place: bool


def write_journal(journal: Path, batch: list[StagedBlob]) -> None:
    with open(journal, "wb") as handle:
        handle.write(_MAGIC)
        for staged in batch:
            header = (
                f'{{"id": {quote(staged.id)}, "path": {quote(staged.path)}, "length": {len(staged.blob)}}}'
            )
            handle.write(header.encode() + b"\n" + staged.blob + b"\n")
        handle.write(_END)
        handle.flush()
        os.fsync(handle.fileno())
    directory = os.open(journal.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def read_journal(journal: Path) -> list[tuple[str, str, bytes]] | None:
    """(id, path, blob) per entry, or None when the journal was never completed."""
    data = journal.read_bytes()
    if not data.startswith(_MAGIC) or not data.endswith(_END):
        return None
    entries = []
    position = len(_MAGIC)
    end = len(data) - len(_END)
    try:
        while position < end:
            newline = data.index(b"\n", position)
            header = json.loads(data[position:newline])
            start = newline + 1
            blob = data[start : start + header["length"]]
            # A tampered journal must not steer the recovery's writes and deletes outside the tiers.
            entry_id, path = str(uuid.UUID(header["id"])), canonical_relative_path(header["path"])
            entries.append((entry_id, path, blob))
            position = start + header["length"] + 1
    except (ValueError, KeyError, TypeError, UnsafePathError) as error:
        raise StrataError(
            f"{journal}: damaged eviction journal ({error}); the blobs it lists may be incomplete"
        ) from error
    return entries


def _write_all(descriptor: int, data: bytes) -> None:
    view, offset = memoryview(data), 0
    while offset < len(data):
        offset += os.pwrite(descriptor, view[offset:], offset)


def _version(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def archive_batch(batch: list[StagedBlob], journal: Path, shadow: ShadowIndex) -> dict[str, str]:
    """Journal, turn each cooled file into its blob, sync, commit the shadow rows, drop the journal.

    Returns the files skipped because they changed since they were read (path → why); they stay in cooled,
    untouched, and get no shadow row. The shadow rows are inserted in a worker thread while the files move;
    they are committed after the sync. If anything fails after the journal is written, the journal stays
    and the next lock holder finishes the batch.
    """
    try:
        write_journal(journal, batch)
        pending = shadow.add_in_background(staged.entry for staged in batch)
        try:
            skipped = _turn_into_blobs(batch)
            sync_filesystem(journal.parent)
        except BaseException:
            pending.rollback()
            raise
    finally:
        close_descriptors(batch)
    pending.commit(drop_ids=[staged.id for staged in batch if staged.path in skipped])
    journal.unlink()
    return skipped


def close_descriptors(batch: list[StagedBlob]) -> None:
    for staged in batch:
        if staged.descriptor >= 0:
            os.close(staged.descriptor)


def _turn_into_blobs(batch: list[StagedBlob]) -> dict[str, str]:
    skipped = {}
    for staged in batch:
        change = _rewrite_into_blob(staged) if staged.in_place else _copy_into_blob(staged)
        if change:
            skipped[staged.path] = change
    return skipped


def _rewrite_into_blob(staged: StagedBlob) -> str:
    """Rename the cooled file into archive/ first, then rewrite it there as its blob.

    The rename takes the name away from editors, so only a writer that already had the file open could
    still change it; the (inode, size, mtime) read before staging is compared after the rename: a file
    edited since it was read goes back to cooled untouched and is skipped this cycle ("" when archived).
    """
    os.rename(staged.source, staged.blob_file)
    # The name now in archive/ must still be the very file (inode, size, mtime) that was read, whose
    # descriptor staging kept open: then writing through that descriptor rewrites exactly it.
    if _version(os.lstat(staged.blob_file)) != staged.version:
        return put_back(staged.blob_file, staged.source)
    # The blob JSON is always longer than the text it escapes, so it covers the old bytes.
    _write_all(staged.descriptor, staged.blob)
    return ""


def _copy_into_blob(staged: StagedBlob) -> str:
    """A file with other hard links must keep its content for them: a new blob file instead."""
    try:
        if _version(os.lstat(staged.source)) != staged.version:
            return f"{staged.source}: changed since it was read; kept in cooled, archived next cycle"
    except FileNotFoundError:
        return f"{staged.source}: removed since it was read"
    with open(staged.blob_file, "xb") as handle:
        handle.write(staged.blob)
    os.unlink(staged.source)
    return ""


def put_back(moved: str, source: str) -> str:
    """Return an edited file to its cooled path (or beside it, if a new file took the name meanwhile)."""
    try:
        move_without_overwrite(moved, source)
        kept = source
    except DestinationExistsError:
        kept = os.path.join(os.path.dirname(source), sibling_name(os.path.basename(source), ".edited"))
        move_without_overwrite(moved, kept)
    return f"{kept}: changed while it was being archived; kept in cooled, archived next cycle"


def _is_original_or_rewrite(data: bytes, original: bytes, blob: bytes) -> bool:
    """Whether `data` is the original file or its interrupted in-place rewrite into `blob`."""
    if data in (original, blob) or blob.startswith(data):  # untouched, done, or a partly written copy
        return True
    common = len(os.path.commonprefix([data, blob]))
    return data[common:] == original[common:] and len(data) == max(len(original), common)


def finish_interrupted_eviction(
    journal: Path, cooled_root: Path, archive_root: Path, shadow: ShadowIndex | None
) -> int:
    """Complete a batch a dead process left behind; returns how many blobs it covered.

    With `shadow=None` the shadow index is left alone (the caller is about to rebuild it from the blobs).
    """
    entries = read_journal(journal)
    if entries is None:
        journal.unlink()
        return 0
    rows = []
    for entry_id, path, blob in entries:
        blob_file = archive_root / f"{entry_id}.json"
        source = cooled_root / path
        try:
            original = json.loads(blob)["content"].encode("utf-8")
        except (ValueError, KeyError, TypeError) as error:
            raise StrataError(f"{journal}: cannot finish the interrupted eviction: {error}") from error
        if not _recover_blob(blob_file, source, blob, original):
            continue
        parsed = read_blob(blob_file)
        rows.append(
            ShadowEntry(
                entry_id,
                path,
                parsed.tags,
                str(blob_file),
                parsed.content[:PREVIEW_CHARS],
                parsed.archived_at,
            )
        )
    sync_filesystem(journal.parent)
    if shadow is not None:
        existing = shadow.existing_ids([row.id for row in rows])
        shadow.add(row for row in rows if row.id not in existing)
    journal.unlink()
    return len(entries)


def _recover_blob(blob_file: Path, source: Path, blob: bytes, original: bytes) -> bool:
    """Make `blob_file` hold `blob` unless the file was edited meanwhile; True if it is archived.

    Under the store lock no Strata process touched these files, so each is the original, (part of) its
    rewrite into the blob, or a user's edit — which is never overwritten or deleted.
    """
    if blob_file.exists():
        data = blob_file.read_bytes()
        if not _is_original_or_rewrite(data, original, blob):
            put_back(str(blob_file), str(source))
            return False
        if data != blob:
            atomic_write_bytes(blob_file, blob)
    else:
        if source.is_file() and not source.is_symlink() and source.read_bytes() != original:
            return False  # edited before it was moved: it stays in cooled, archived next cycle
        atomic_write_bytes(blob_file, blob)
    if source.is_file() and not source.is_symlink() and source.read_bytes() == original:
        source.unlink()
    return True
