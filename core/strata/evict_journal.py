"""Crash-safe batch eviction without creating a new file per blob.

Creating a file (a new inode) is the slow part of archiving (≈1 ms per file on the benchmark machine,
against ≈20 µs for a rename), so eviction turns each cooled file *into* its blob: it renames the file into
`archive/` and rewrites it there with the blob JSON. The rename comes first so editors lose the name; a file
whose (inode, size, mtime) changed since it was read goes back to cooled untouched and is skipped this
cycle. To lose nothing if the process dies half-way, every blob of a batch is first appended to the run's
journal (`strata_evict.journal`, fsync'd). The journal is removed only after one `syncfs` made every blob of
the run durable and the run's shadow rows were committed (one transaction). Whoever takes the store lock
next finds a leftover journal and finishes the run from it (`finish_interrupted_eviction`).

Journal format: a `STRATA-EVICT-JOURNAL 1` line, then one section per batch: per blob a JSON header line
`{"id", "path", "length"}` followed by `length` bytes of blob JSON and a newline, then an `END` line. A
section without `END` was never completed, so none of its cooled files had been touched yet: it is simply
ignored (a journal of one section is the format of earlier versions).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from stratagate.strata import rewrite_worker
from stratagate.strata.archive import PREVIEW_CHARS, quote, read_blob
from stratagate.strata.errors import DestinationExistsError, StrataError, UnsafePathError
from stratagate.strata.fsutil import (
    FolderDescriptors,
    atomic_write_bytes,
    close_all,
    move_without_overwrite,
    sibling_name,
    sync_filesystem,
)
from stratagate.strata.paths import canonical_relative_path
from stratagate.strata.shadow import PendingRows, Row, ShadowEntry, ShadowIndex

JOURNAL_FILE = "strata_evict.journal"
_MAGIC = b"STRATA-EVICT-JOURNAL 1\n"
_END = b"END\n"


@dataclass(slots=True)
class StagedBlob:
    """A cooled file about to be archived: its blob bytes and shadow row, ready before anything moves.

    Not frozen: a frozen dataclass of 13 fields cost about a microsecond more per file to build."""

    id: str
    path: str
    source: str
    version: tuple[int, int, int]  # (inode, size, mtime) when it was read
    descriptor: int  # the file, opened for reading and writing when it was read; -1 when closed
    blob_file: str
    blob: bytes
    row: Row  # the shadow row, as `ShadowEntry.row()` gives it
    in_place: bool
    # `source` and `blob_file` as (descriptor of the folder, name), for syscalls that skip the path walk
    source_folder: int
    source_name: str
    archive_folder: int
    blob_name: str


def open_journal(journal: Path) -> BinaryIO:
    """Create the run's journal with its first line, not yet durable (`sync_new_journal` makes it so)."""
    handle = open(journal, "wb")  # noqa: SIM115 - stays open for the whole run
    try:
        handle.write(_MAGIC)
        handle.flush()
    except BaseException:
        handle.close()
        raise
    return handle


def sync_new_journal(handle: BinaryIO, journal: Path) -> None:
    """Make a new journal and its directory entry durable."""
    os.fsync(handle.fileno())
    directory = os.open(journal.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def append_batch(handle: BinaryIO, batch: list[StagedBlob]) -> None:
    """Append one batch's section (the caller fsyncs it before touching any of its files)."""
    parts = []
    for staged in batch:
        # A uuid needs no JSON escaping; the path does.
        header = f'{{"id": "{staged.id}", "path": {quote(staged.path)}, "length": {len(staged.blob)}}}\n'
        parts += (header.encode(), staged.blob, b"\n")
    parts.append(_END)
    handle.write(b"".join(parts))
    handle.flush()


def read_journal(journal: Path) -> list[tuple[str, str, bytes]]:
    """(id, path, blob) per entry of the completed sections (an unfinished last section is left out)."""
    data = journal.read_bytes()
    if not data.startswith(_MAGIC):
        return []
    entries: list[tuple[str, str, bytes]] = []
    section: list[tuple[str, str, bytes]] = []
    position = len(_MAGIC)
    while (newline := data.find(b"\n", position)) >= 0:
        if data[position : newline + 1] == _END:
            entries += section
            section, position = [], newline + 1
            continue
        try:
            header = json.loads(data[position:newline])
            start, length = newline + 1, header["length"]
            if (
                not isinstance(length, int)
                or length < 0
                or data[start + length : start + length + 1] != b"\n"
            ):
                raise ValueError(f"entry {header['id']!r} is cut short")
            # A tampered journal must not steer the recovery's writes and deletes outside the tiers.
            entry_id, path = str(uuid.UUID(header["id"])), canonical_relative_path(header["path"])
        except (ValueError, KeyError, TypeError, UnsafePathError) as error:
            if data.find(b"\n" + _END, position - 1) < 0:
                break  # the unfinished last section: none of its files had been touched
            raise StrataError(
                f"{journal}: damaged eviction journal ({error}); the blobs it lists may be incomplete"
            ) from error
        section.append((entry_id, path, data[start : start + length]))
        position = start + length + 1
    return entries


def _write_all(descriptor: int, data: bytes, offset: int = 0) -> None:
    """Write `data` at the start of the file, from `offset` on (what a short `pwrite` left)."""
    view = memoryview(data)
    while offset < len(data):
        offset += os.pwrite(descriptor, view[offset:], offset)


def _version(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


class EvictionRun:
    """One eviction run: batches journalled then turned into blobs, their shadow rows inserted by a worker
    thread in one transaction, and one durability point at the end (`syncfs`, commit, journal removed).

    A second worker thread rewrites each batch while the caller reads the next one (the rewrite is mostly
    syscalls, which release the GIL). The caller appends each batch's journal section itself: appending
    in the rewriter (or a thread of its own) showed no gain and made the caller wait longer for rewrites.
    The section's fsync starts at once in a third thread, so the rewriter does not wait for it in turn. Use
    as a context manager: leaving it normally finishes the run; leaving it by an exception rolls the rows
    back and leaves the journal for the next lock holder, who finishes the run.
    """

    def __init__(self, journal: Path, shadow: ShadowIndex, files: int = 0):
        self._journal = journal
        self._files = files  # planned: a large run rewrites in a worker process, forked on entering
        self._worker: rewrite_worker.RewriteWorker | None = None
        self._shadow = shadow
        self._handle: BinaryIO | None = None  # the journal, created with the first batch
        self._rows: PendingRows | None = None
        self._rewriter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="strata-rewrite")
        # With a worker the rewriter only queues batches for it; this thread takes its answers, so the
        # worker, the run's slowest step, starts each batch without waiting for this process.
        self._answers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="strata-rewrite-answers")
        # Each section's fsync starts as soon as it is appended, while the previous batch is rewritten.
        self._syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="strata-journal-sync")
        self._handed: list[tuple[Future, list[StagedBlob], FolderDescriptors]] = []
        self._not_archived: list[str] = []  # shadow ids of files skipped because they changed
        self._writeback: threading.Thread | None = None

    def __enter__(self) -> EvictionRun:
        self._worker = rewrite_worker.start_for(self._files)  # before this run starts any thread
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None:
            self._finish()
        else:
            self._abandon()

    def archive(self, batch: list[StagedBlob], folders: FolderDescriptors) -> Future[dict[str, str]]:
        """Journal the batch and hand it to the rewriter, which closes its descriptors and `folders`.

        The result: the files skipped because they changed since they were read (path → why); they stay
        in cooled, untouched, and their shadow rows are dropped before the commit.
        """
        try:
            new_journal = self._handle is None
            if new_journal:
                self._handle = open_journal(self._journal)
                self._rows = self._shadow.add_in_background()
            append_batch(self._handle, batch)
            if new_journal:  # the journal, its directory entry and its first section, beside the reader
                synced = self._syncer.submit(sync_new_journal, self._handle, self._journal)
            else:
                synced = self._syncer.submit(os.fsync, self._handle.fileno())
            assert self._rows is not None
            self._rows.add([staged.row for staged in batch])
        except BaseException:
            close_descriptors(batch, folders)
            raise
        self._handed = [handed for handed in self._handed if not handed[0].done()]
        if self._worker is None:
            future = self._rewriter.submit(self._rewrite, batch, folders, synced)
        else:
            sent = self._rewriter.submit(_send_to, self._worker, batch, synced)
            future = self._answers.submit(self._rewritten_by_worker, batch, folders, sent)
        self._handed.append((future, batch, folders))
        return future

    def _rewrite(
        self, batch: list[StagedBlob], folders: FolderDescriptors, synced: Future[None]
    ) -> dict[str, str]:
        try:
            synced.result()  # the batch's section is durable before any of its files is touched
            skipped = _turn_into_blobs(batch)
        finally:
            close_descriptors(batch, folders)
        return self._rewritten(batch, skipped)

    def _rewritten_by_worker(
        self, batch: list[StagedBlob], folders: FolderDescriptors, sent: Future[list[int]]
    ) -> dict[str, str]:
        assert self._worker is not None
        try:
            skipped = _answered(self._worker, batch, sent.result())
        finally:
            close_descriptors(batch, folders)
        return self._rewritten(batch, skipped)

    def _rewritten(self, batch: list[StagedBlob], skipped: dict[str, str]) -> dict[str, str]:
        self._not_archived += [staged.id for staged in batch if staged.path in skipped]
        self._start_writeback()
        return skipped

    def _start_writeback(self) -> None:
        """Start writing the blobs out while the next batch is read, so the final `syncfs` waits less."""
        if self._writeback is None or not self._writeback.is_alive():
            self._writeback = threading.Thread(
                target=_write_back, args=(self._journal.parent,), name="strata-writeback"
            )
            self._writeback.start()

    def _finish(self) -> None:
        self._rewriter.shutdown()
        self._answers.shutdown()
        self._stop_worker()
        if self._handle is None:
            self._syncer.shutdown()
            return
        assert self._rows is not None
        try:
            for future, _batch, _folders in self._handed:
                future.result()  # a failed rewrite leaves the journal for the next lock holder
        except BaseException:
            self._abandon()
            raise
        # Every blob is written (not yet durable) and the skipped files are known: the rows are committed
        # in the sync thread while this one waits for the final `syncfs`. Committing first is safe because
        # the journal stays until both are done: the next lock holder restores any blob from it and adds
        # only the rows that are missing.
        committed = self._syncer.submit(self._rows.commit, self._not_archived)
        self._syncer.shutdown(wait=False)
        try:
            if self._writeback is not None:
                self._writeback.join()
            sync_filesystem(self._journal.parent)
        finally:
            try:
                committed.result()
            finally:
                self._handle.close()
        self._journal.unlink()

    def _abandon(self) -> None:
        self._rewriter.shutdown(cancel_futures=True)
        self._answers.shutdown(cancel_futures=True)
        self._stop_worker()
        self._syncer.shutdown()
        for future, batch, folders in self._handed:
            if future.cancelled():
                close_descriptors(batch, folders)
        if self._writeback is not None:
            self._writeback.join()
        if self._rows is not None:
            self._rows.rollback()
        if self._handle is not None:
            self._handle.close()

    def _stop_worker(self) -> None:
        """The worker exits once its input ends; it must be gone before the store lock is released."""
        if self._worker is not None:
            self._worker.close()


def _write_back(folder: Path) -> None:
    """A head start for the final `syncfs`; its failure is reported by that final one."""
    with contextlib.suppress(OSError):
        sync_filesystem(folder)


def close_descriptors(batch: list[StagedBlob], folders: FolderDescriptors | None = None) -> None:
    """Close the batch's files (and `folders`): a few `close_range` calls for the whole batch."""
    descriptors = [staged.descriptor for staged in batch if staged.descriptor >= 0]
    if folders is None:
        close_all(descriptors)
    else:
        folders.close(together_with=descriptors)


def _turn_into_blobs(batch: list[StagedBlob]) -> dict[str, str]:
    """Rename each cooled file into archive/ first, then rewrite it there as its blob (a file with other
    hard links gets a new blob file instead); the files skipped because they changed (path → why).

    The rename takes the name away from editors, so only a writer that already had the file open could
    still change it; the (inode, size, mtime) read before staging is compared after the rename: a file
    edited since it was read goes back to cooled untouched and is skipped this cycle.
    """
    skipped = {}
    rename, stat, pwrite = os.rename, os.stat, os.pwrite  # this loop is the rewrite thread's whole work
    for staged in batch:
        if not staged.in_place:
            change = _copy_into_blob(staged)
            if change:
                skipped[staged.path] = change
            continue
        archive, name, blob = staged.archive_folder, staged.blob_name, staged.blob
        rename(staged.source_name, name, src_dir_fd=staged.source_folder, dst_dir_fd=archive)
        # The name now in archive/ must still be the very file (inode, size, mtime) that was read, whose
        # descriptor staging kept open: then writing through that descriptor rewrites exactly it.
        moved = stat(name, dir_fd=archive, follow_symlinks=False)
        if (moved.st_ino, moved.st_size, moved.st_mtime_ns) != staged.version:
            skipped[staged.path] = put_back(staged.blob_file, staged.source)
            continue
        # The blob JSON is always longer than the text it escapes, so it covers the old bytes.
        written = pwrite(staged.descriptor, blob, 0)
        if written < len(blob):
            _write_all(staged.descriptor, blob, written)
    return skipped


def _send_to(
    worker: rewrite_worker.RewriteWorker, batch: list[StagedBlob], synced: Future[None]
) -> list[int]:
    """Queue `_turn_into_blobs`'s renames, checks and writes of the batch's files with no other hard link
    for `worker`, once the batch's section is durable; their positions in the batch."""
    in_place = [position for position, staged in enumerate(batch) if staged.in_place]
    jobs = [
        (
            staged.descriptor,
            staged.source_folder,
            staged.source_name,
            staged.archive_folder,
            staged.blob_name,
            staged.version,
            len(staged.blob),
        )
        for staged in (batch[position] for position in in_place)
    ]
    folders = {job[1] for job in jobs} | {job[3] for job in jobs}
    descriptors = [*folders, *(job[0] for job in jobs)]
    synced.result()  # the batch's section is durable before any of its files is touched
    if jobs:
        worker.send(jobs, b"".join(batch[position].blob for position in in_place), descriptors)
    return in_place


def _answered(
    worker: rewrite_worker.RewriteWorker, batch: list[StagedBlob], in_place: list[int]
) -> dict[str, str]:
    """The rest of `_turn_into_blobs` once `worker` answered for the batch `_send_to` queued: files with
    other hard links, and changed files going back to cooled, handled here, in the batch's order."""
    changed, error = worker.receive() if in_place else ([], None)
    changed_positions = {in_place[index] for index in changed}
    done = len(batch) if error is None else in_place[error[0]]
    skipped = {}
    for position, staged in enumerate(batch[:done]):
        if not staged.in_place:
            change = _copy_into_blob(staged)
            if change:
                skipped[staged.path] = change
        elif position in changed_positions:
            skipped[staged.path] = put_back(staged.blob_file, staged.source)
    if error is not None:
        _index, code, message, name, other_name = error
        raise OSError(code, message, name, None, other_name)
    return skipped


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
    if not entries:
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
