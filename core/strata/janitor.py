"""The Janitor: migrate (active → cooled), evict (cooled → archive), promote (cooled → active), rehydrate.

Every operation is split into `plan_*` (what would happen: the dry run, also shown in the app's preview) and
`apply_*` (do it). Both run under the store lock. Per-file problems become `FileResult`s with status
`conflict` or `error`, naming the file; the other files still move. Differences from the reference:

* nothing is ever overwritten (B-8): a destination that exists gives `conflict` and the file stays put;
* files move by an atomic no-replace rename (no copy), the sidecar is written once per run and shadow rows
  are inserted in one transaction (P-1, P-2);
* eviction is crash-safe (see `evict_journal`); a blob is deleted after rehydration (B-4) — the restored
  file holds the content;
* paths come from the walk or through `canonical_relative_path`/`inside_tier` (B-9); symlinks never move;
* `active/index.md` is generated and never migrated (B-7).
"""

from __future__ import annotations

import functools
import gc
import os
import resource
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from stat import S_ISREG

from stratagate.strata import rehydrate_journal
from stratagate.strata.archive import (
    RunBlobs,
    read_blob,
    utc_now_iso,
)
from stratagate.strata.errors import (
    DestinationExistsError,
    FileTooLargeError,
    NotTextError,
    StrataError,
    StrataFileNotFoundError,
)
from stratagate.strata.evict_journal import EvictionRun, StagedBlob, close_descriptors
from stratagate.strata.fsutil import (
    FolderDescriptors,
    move_without_overwrite,
    rename_at_no_replace,
    reserve_descriptor_table,
    temp_path,
)
from stratagate.strata.paths import canonical_relative_path
from stratagate.strata.rehydrate_journal import holds_exactly
from stratagate.strata.shadow import ShadowEntry
from stratagate.strata.store import StrataStore, Tier, matches_any, walk_files

SECONDS_PER_DAY = 86400
# Evicted files are journalled and synced in batches of about this many bytes (bounds memory).
EVICT_BATCH_BYTES = 64 * 1024 * 1024
# Each staged file keeps its descriptor, and its folder's, until its batch is archived, and two batches are
# open at a time: at most this many files per batch, and never more than an eighth of the open-file limit.
EVICT_BATCH_FILES = 2048


def _evict_batch_files() -> int:
    """Files per eviction batch. A soft open-file limit below 8 × EVICT_BATCH_FILES (1,024 is common) is
    raised toward the hard limit first: smaller batches would each pay a journal fsync."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 8 * EVICT_BATCH_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        if raised > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
            except (ValueError, OSError):
                pass
    return max(16, min(EVICT_BATCH_FILES, soft // 8))


# The first batch is read while nothing else runs, and the last two are rewritten after the last read:
# batches start and end this small, so the rewrite and index threads overlap the reader for longer.
EVICT_EDGE_BATCH_FILES = 128
# From one batch to the next they grow by at most this factor: the rewrite of a batch must not finish
# before the next one is read (reading a file takes about 2/3 of the time its rewrite does).
EVICT_BATCH_GROWTH = 1.5


def _next_batch_files(remaining: int, largest: int, previous: int) -> int:
    """Files in the next batch (after the first, of `previous` files) when `remaining` planned files are
    left to read: half of them, so the batches halve toward the end, at most EVICT_BATCH_GROWTH times the
    previous one, and between EVICT_EDGE_BATCH_FILES and `largest`."""
    grown = int(previous * EVICT_BATCH_GROWTH)
    return max(min(EVICT_EDGE_BATCH_FILES, largest), min(largest, grown, remaining // 2))


Progress = Callable[[int], None]


@dataclass(slots=True)
class FileResult:
    """One file's outcome. `status`: would_migrate/migrated, would_evict/evicted, would_promote/promoted,
    would_rehydrate/rehydrated, conflict, skipped, quarantined, error.

    Treat it as read-only (change one with `dataclasses.replace`). Not frozen: eviction builds two per file,
    and a frozen dataclass of 8 fields took about 1 µs more each to build."""

    path: str
    status: str
    detail: str = ""
    age_days: int | None = None
    access_count: int | None = None
    shadow_id: str | None = None
    archive_path: str | None = None
    target: Tier | None = None

    def as_dict(self) -> dict[str, object]:
        values = ((name, getattr(self, name)) for name in self.__slots__)
        return {key: value for key, value in values if value not in (None, "")}


def _without_cyclic_gc(function):
    """Run `function` with the cyclic garbage collector paused. Planning and moving 20,000 files makes
    about 100,000 short-lived objects (results, staged blobs, rows, tuples): the collector ran about 100
    times during such an eviction and walked the whole heap (a GUI's or a server's included) at each of its
    full passes, ≈ 0.1 s of the reading thread's time in all. Reference counting frees these objects
    anyway; a cycle made meanwhile waits for the next collection after the run."""

    @functools.wraps(function)
    def paused(*arguments, **keywords):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*arguments, **keywords)
        finally:
            if was_enabled:
                gc.enable()

    return paused


def _age_days(now: float, since: float) -> int:
    return int((now - since) // SECONDS_PER_DAY)


def _pending(results: Iterable[FileResult]) -> list[FileResult]:
    return [result for result in results if result.status.startswith("would_")]


def _unmovable(relative: str, entry: os.DirEntry) -> FileResult | None:
    """Symlinks never move; a file name that is not UTF-8 cannot be stored in the sidecar or shadow index."""
    if entry.is_symlink():
        return FileResult(relative, "skipped", "symlink: Strata never moves links")
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        shown = relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return FileResult(shown, "error", f"{entry.path!r}: file name is not UTF-8; rename it to move it")
    return None


def _done(results: list[FileResult], status: str) -> int:
    return sum(result.status == status for result in results)


# Migrate ------------------------------------------------------------------------------------------------
@_without_cyclic_gc
def plan_migrate(store: StrataStore, now: float | None = None) -> list[FileResult]:
    """Active files matching `active_file_patterns` whose age in whole days reaches their decay threshold."""
    now = time.time() if now is None else now
    config = store.config
    cooled_prefix = f"{store.cooled_root}/"
    plan = []
    # The walk goes folder by folder: one listing of the matching cooled folder, not a stat per file, and
    # one threshold lookup per folder (unless a threshold names the file itself).
    listed_folder, taken = None, set()
    days_folder, folder_days = None, 0
    with store.lock():
        for relative, entry in walk_files(store.active_root):
            if store.is_generated(Tier.ACTIVE, relative) or not matches_any(
                relative, config.active_file_patterns
            ):
                continue
            if entry.is_symlink() or not relative.isascii():  # as in `plan_evict`
                refusal = _unmovable(relative, entry)
                if refusal:
                    plan.append(refusal)
                    continue
            age = _age_days(now, entry.stat(follow_symlinks=False).st_mtime)
            days = config.decay_thresholds.get(relative)
            if days is None:
                source_folder = relative.rpartition("/")[0]
                if source_folder != days_folder:
                    days_folder, folder_days = source_folder, config.decay_days_of_folder(source_folder)
                days = folder_days
            if age < days:
                continue
            destination = cooled_prefix + relative
            folder, _, name = destination.rpartition("/")
            if folder != listed_folder:
                listed_folder, taken = folder, _names_in(folder)
            if name in taken:
                plan.append(FileResult(relative, "conflict", f"{destination} already exists", age))
            else:
                # Positional, as in `plan_evict`.
                plan.append(FileResult(relative, "would_migrate", "", age, None, None, None, Tier.COOLED))
    return plan


def _names_in(folder: str) -> set[str]:
    """Every name in `folder` (files, folders, links, broken links); none if it cannot be listed."""
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


@_without_cyclic_gc
def apply_migrate(
    store: StrataStore, plan: list[FileResult], progress: Progress | None = None
) -> list[FileResult]:
    results = [result for result in plan if not result.status.startswith("would_")]
    now = time.time()
    # Plain strings, not Path objects: path arithmetic was a large share of the per-file cost.
    active_prefix, cooled_prefix = f"{store.active_root}/", f"{store.cooled_root}/"
    made_folders: set[str] = set()
    folders = FolderDescriptors(limit=64)  # the plan goes folder by folder
    with store.lock():
        sidecar = store.sidecar()
        try:
            for planned in _pending(plan):
                relative = planned.path
                source, destination = active_prefix + relative, cooled_prefix + relative
                try:
                    source_folder, name = source.rsplit("/", 1)
                    folder = destination[: -len(name) - 1]
                    if folder not in made_folders:
                        os.makedirs(folder, exist_ok=True)
                        made_folders.add(folder)
                    if not rename_at_no_replace(
                        folders.get(source_folder), name, folders.get(folder), name, (source, destination)
                    ):
                        move_without_overwrite(source, destination)
                    sidecar.start_tracking(relative, now)
                    # Positional, as in `plan_evict`.
                    results.append(
                        FileResult(relative, "migrated", "", planned.age_days, None, None, None, Tier.COOLED)
                    )
                except DestinationExistsError as error:
                    results.append(replace(planned, status="conflict", detail=str(error)))
                except OSError as error:
                    results.append(replace(planned, status="error", detail=f"{source}: {error}"))
                if progress:
                    progress(1)
        finally:
            folders.close()
        sidecar.save()
        if _done(results, "migrated"):
            store.regenerate_index()
    return results


# Evict --------------------------------------------------------------------------------------------------
@_without_cyclic_gc
def plan_evict(
    store: StrataStore,
    paths: Iterable[str] | None = None,
    now: float | None = None,
    check_sizes: bool = True,
) -> list[FileResult]:
    """Cooled files idle for their LRU days and accessed at most `lru_min_access_count` times.

    With `paths`, exactly those files (the reference's `forget`), whatever their age. A file over
    `max_archive_bytes` is planned as an error; with `check_sizes` False (a plan applied at once, not
    shown) it is planned, and `apply_evict`, which takes every file's size anyway, refuses it with the same
    error: one `lstat` per due file less.
    """
    now = time.time() if now is None else now
    config = store.config
    chosen = None if paths is None else {canonical_relative_path(path) for path in paths}
    plan = []
    lru_days: dict[str, int] = {}  # by first path segment, as `lru_days_for` looks them up
    with store.lock():
        records = store.sidecar().records
        for relative, entry in walk_files(store.cooled_root):
            if chosen is not None and relative not in chosen:
                continue
            if chosen is not None:
                chosen.discard(relative)
            # An ASCII name always encodes: only links and other names need `_unmovable`'s checks.
            if entry.is_symlink() or not relative.isascii():
                refusal = _unmovable(relative, entry)
                if refusal:
                    plan.append(refusal)
                    continue
            record = records.get(relative)
            if record is None:
                stat = entry.stat(follow_symlinks=False)
                count, age = 0, _age_days(now, stat.st_mtime)
            else:
                stat = None  # a file that is not due needs no `lstat`
                count, age = record.access_count, _age_days(now, record.last_accessed)
            if chosen is None:
                first = relative.partition("/")[0]
                days = lru_days.get(first)
                if days is None:
                    days = lru_days[first] = config.lru_days_for(relative)
                if age < days or count > config.lru_min_access_count:
                    continue
            if check_sizes and stat is None:
                stat = entry.stat(follow_symlinks=False)
            if stat is not None and stat.st_size > config.max_archive_bytes:
                error = FileTooLargeError(
                    store.cooled_root / relative, stat.st_size, config.max_archive_bytes
                )
                plan.append(FileResult(relative, "error", str(error), age, count))
                continue
            # Positional (path, status, detail, age_days, access_count, shadow_id, archive_path, target):
            # keywords cost about 0.3 µs more per file.
            plan.append(FileResult(relative, "would_evict", "", age, count, None, None, Tier.ARCHIVE))
        for missing in sorted(chosen or ()):
            plan.append(
                FileResult(missing, "error", str(StrataFileNotFoundError(missing, "the cooled tier")))
            )
    return plan


@_without_cyclic_gc
def apply_evict(
    store: StrataStore, plan: list[FileResult], progress: Progress | None = None
) -> list[FileResult]:
    """Archive the planned files in batches (see `evict_journal`): nothing is lost if the process dies.

    A worker thread rewrites each batch while the next one is read, so two batches are open at a time.
    """
    results = [result for result in plan if not result.status.startswith("would_")]
    with store.lock():
        store.archive_root.mkdir(parents=True, exist_ok=True)
        sidecar = store.sidecar()
        shadow = store.shadow()  # a damaged index is reported here, before any file moves
        batch: list[StagedBlob] = []
        folders = FolderDescriptors()  # the batch's folders (at most one per file), open until rewritten
        archive_folder = FolderDescriptors()  # archive/, open for the whole run
        pending = _pending(plan)
        largest_batch = _evict_batch_files()
        batch_files = min(EVICT_EDGE_BATCH_FILES, largest_batch)
        # Two batches are open at a time, each with a descriptor per file and at most one per folder.
        reserve_descriptor_table(4 * min(len(pending), largest_batch) + 64)
        planned_by_path = {result.path: result for result in plan}
        try:
            with EvictionRun(store.evict_journal_file, shadow, files=len(pending)) as run:
                handed: list[tuple[Future[dict[str, str]], list[StagedBlob]]] = []
                batch_bytes = 0
                # One eviction run, one timestamp.
                stager = _Stager(store, archive_folder.get(str(store.archive_root)), utc_now_iso())
                for index, planned in enumerate(pending):
                    if batch_bytes >= EVICT_BATCH_BYTES or len(batch) >= batch_files:
                        batch_files = _next_batch_files(len(pending) - index, largest_batch, batch_files)
                        archiving, batch, batch_bytes, batch_folders = batch, [], 0, folders
                        folders = FolderDescriptors()
                        handed.append((run.archive(archiving, batch_folders), archiving))
                        if len(handed) > 1:  # the batch before it is (nearly) rewritten by now
                            results += _archived(*handed.pop(0), sidecar, planned_by_path, progress)
                    try:
                        staged = stager.stage(planned.path, folders)
                    except NotTextError as error:
                        results.append(_quarantine(store, planned, sidecar, error))
                        if progress:
                            progress(1)
                        continue
                    except (StrataError, OSError) as error:
                        results.append(replace(planned, status="error", detail=str(error)))
                        if progress:
                            progress(1)
                        continue
                    batch.append(staged)
                    batch_bytes += len(staged.blob)
                if batch:
                    archiving, batch, batch_folders = batch, [], folders
                    folders = FolderDescriptors()
                    handed.append((run.archive(archiving, batch_folders), archiving))
                for future, archived in handed:
                    results += _archived(future, archived, sidecar, planned_by_path, progress)
            sidecar.save()
        finally:
            close_descriptors(batch)  # staged but never handed to the run (which closes its own)
            folders.close()
            archive_folder.close()
            shadow.close()
    return results


def _quarantine(store: StrataStore, planned: FileResult, sidecar, error: NotTextError) -> FileResult:
    """A cooled file that is not UTF-8 cannot become a JSON blob; instead of failing every cycle it moves,
    unchanged, to `quarantine/` (same relative path) and is reported once."""
    destination = store.quarantine_root / planned.path
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        move_without_overwrite(store.cooled_root / planned.path, destination)
    except (StrataError, OSError) as move_error:
        return replace(planned, status="error", detail=f"{error}; could not quarantine it: {move_error}")
    sidecar.forget(planned.path)
    return replace(planned, status="quarantined", detail=f"{error}; moved unchanged to {destination}")


class _Stager:
    """Reads cooled files into `StagedBlob`s for one eviction run (one `archived_at`, archive/ open once)."""

    def __init__(self, store: StrataStore, archive_folder: int, archived_at: str) -> None:
        self._cooled_prefix = f"{store.cooled_root}/"
        self._archive_prefix = f"{store.archive_root}/"
        self._archive_folder = archive_folder
        self._max_bytes = store.config.max_archive_bytes
        self._blobs = RunBlobs(archived_at)
        self._ids = _new_ids()

    def stage(self, relative: str, folders: FolderDescriptors) -> StagedBlob:
        """Read a cooled file and build its blob and shadow row; the file stays open (read-write) for its
        rewrite, so archiving it costs no second open. Its folder is opened through `folders`."""
        source = self._cooled_prefix + relative
        folder, name = source.rsplit("/", 1)
        source_folder = folders.get(folder)
        # O_NOFOLLOW: a file swapped for a symlink since the plan is refused, never followed out of the tree.
        descriptor = os.open(name, os.O_RDWR | os.O_NOFOLLOW, dir_fd=source_folder)
        try:
            stat = os.fstat(descriptor)
            if not S_ISREG(stat.st_mode):
                raise StrataError(f"{source}: not a regular file")
            if stat.st_size > self._max_bytes:
                raise FileTooLargeError(Path(source), stat.st_size, self._max_bytes)
            encoded = self._blobs.encode(relative, _read_all(descriptor, stat.st_size))
            if encoded is None:
                raise NotTextError(Path(source))
            blob, keywords, preview = encoded
        except BaseException:
            os.close(descriptor)
            raise
        in_place = stat.st_nlink == 1
        if not in_place:
            os.close(descriptor)  # other hard links keep their content: the blob is a new file
            descriptor = -1
        entry_id = next(self._ids)
        blob_name = f"{entry_id}.json"
        blob_file = self._archive_prefix + blob_name
        return StagedBlob(
            entry_id,
            relative,
            source,
            (stat.st_ino, stat.st_size, stat.st_mtime_ns),
            descriptor,
            blob_file,
            blob,
            (entry_id, relative, keywords, blob_file, preview, self._blobs.archived_at),
            in_place,
            source_folder,
            name,
            self._archive_folder,
            blob_name,
        )


# A uuid's variant digit: its two high bits are 10 (RFC 4122), the other two random.
_VARIANT_DIGIT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
_IDS_PER_DRAW = 256  # random bytes for this many ids per `os.urandom` call


def _new_ids() -> Iterator[str]:
    """Random (version 4) uuids as text, like `str(uuid.uuid4())` without building UUID objects, from one
    `os.urandom` call per 256 ids."""
    while True:
        hexa = os.urandom(16 * _IDS_PER_DRAW).hex()
        for start in range(0, len(hexa), 32):
            part = hexa[start : start + 32]
            yield (
                f"{part[:8]}-{part[8:12]}-4{part[13:16]}-{_VARIANT_DIGIT[part[16]]}{part[17:20]}-{part[20:]}"
            )


def _read_all(descriptor: int, size_hint: int) -> bytes:
    """The whole file; one read when it is not growing (asking for one byte more shows the end)."""
    data = os.read(descriptor, size_hint + 1)
    if len(data) <= size_hint:
        return data
    chunks = [data]
    while chunk := os.read(descriptor, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _archived(
    rewrite: Future[dict[str, str]],
    batch: list[StagedBlob],
    sidecar,
    planned_by_path: dict[str, FileResult],
    progress: Progress | None,
) -> list[FileResult]:
    """The results of a batch handed to the run, once its rewrite is done."""
    skipped = rewrite.result()
    results = []
    for staged in batch:
        path = staged.path
        planned = planned_by_path[path]
        if path in skipped:
            results.append(replace(planned, status="skipped", detail=skipped[path]))
        else:
            sidecar.forget(path)
            # Positional, as in `plan_evict`.
            results.append(
                FileResult(
                    path,
                    "evicted",
                    "",
                    planned.age_days,
                    planned.access_count,
                    staged.id,
                    staged.blob_file,
                    Tier.ARCHIVE,
                )
            )
    if progress:
        progress(len(batch))
    return results


# Promote ------------------------------------------------------------------------------------------------
def plan_promote(store: StrataStore, paths: Iterable[str] | None = None) -> list[FileResult]:
    """Cooled files accessed at least `promotion_threshold` times; with `paths`, exactly those files."""
    plan = []
    with store.lock():
        records = store.sidecar().records
        if paths is None:
            threshold = store.config.promotion_threshold
            candidates = sorted(path for path, record in records.items() if record.access_count >= threshold)
        else:
            candidates = [canonical_relative_path(path) for path in paths]
        for relative in candidates:
            record = records.get(relative)
            count = record.access_count if record else 0
            try:
                source = store.file_path(Tier.COOLED, relative)
                destination = store.file_path(Tier.ACTIVE, relative)
            except StrataError as error:
                plan.append(FileResult(relative, "error", str(error), access_count=count))
                continue
            if source.is_symlink() or not source.is_file():
                if paths is not None:
                    plan.append(
                        FileResult(
                            relative, "error", str(StrataFileNotFoundError(relative, "the cooled tier"))
                        )
                    )
                continue
            if os.path.lexists(destination) or store.is_generated(Tier.ACTIVE, relative):
                plan.append(
                    FileResult(relative, "conflict", f"{destination} already exists", access_count=count)
                )
            else:
                plan.append(FileResult(relative, "would_promote", access_count=count, target=Tier.ACTIVE))
    return plan


def apply_promote(
    store: StrataStore, plan: list[FileResult], progress: Progress | None = None
) -> list[FileResult]:
    results = [result for result in plan if not result.status.startswith("would_")]
    with store.lock():
        sidecar = store.sidecar()
        for planned in _pending(plan):
            try:
                _promote_file(store, planned.path)
                sidecar.forget(planned.path)
                results.append(replace(planned, status="promoted"))
            except DestinationExistsError as error:
                results.append(replace(planned, status="conflict", detail=str(error)))
            except (StrataError, OSError) as error:
                results.append(replace(planned, status="error", detail=str(error)))
            if progress:
                progress(1)
        sidecar.save()
        if _done(results, "promoted"):
            store.regenerate_index()
    return results


def _promote_file(store: StrataStore, relative: str) -> None:
    destination = store.file_path(Tier.ACTIVE, relative)
    destination.parent.mkdir(parents=True, exist_ok=True)
    move_without_overwrite(store.file_path(Tier.COOLED, relative), destination)
    # A fresh mtime, as the reference's rewrite gave, so the next migration does not send it straight back.
    os.utime(destination)


# Rehydrate ----------------------------------------------------------------------------------------------
def plan_rehydrate(store: StrataStore, keys: Iterable[str], target: Tier = Tier.ACTIVE) -> list[FileResult]:
    """Archived files by shadow id or original path (the newest archive of that path)."""
    plan = []
    with store.lock():
        shadow = store.shadow(create=False)
        try:
            for key in keys:
                entry = shadow.find(key)
                if entry is None:
                    plan.append(
                        FileResult(key, "error", str(StrataFileNotFoundError(key, "the shadow index")))
                    )
                    continue
                try:
                    blob = read_blob(blob_file(store, entry))
                    destination = store.file_path(target, blob.original_path)
                    relative = canonical_relative_path(blob.original_path)
                except StrataError as error:
                    plan.append(FileResult(entry.original_path, "error", str(error), shadow_id=entry.id))
                    continue
                found = FileResult(
                    relative,
                    "would_rehydrate",
                    shadow_id=entry.id,
                    archive_path=entry.archive_path,
                    target=target,
                )
                if store.is_generated(target, relative) or (
                    os.path.lexists(destination) and not holds_exactly(destination, blob.content)
                ):
                    found = replace(found, status="conflict", detail=f"{destination} already exists")
                plan.append(found)
        finally:
            shadow.close()
    return plan


def apply_rehydrate(
    store: StrataStore, plan: list[FileResult], progress: Progress | None = None
) -> list[FileResult]:
    results = [result for result in plan if not result.status.startswith("would_")]
    pending = _pending(plan)
    with store.lock():
        sidecar = store.sidecar()
        shadow = store.shadow()
        try:
            if pending:
                # A kill between restoring a file and dropping its row is finished by the next lock holder.
                rehydrate_journal.write_journal(
                    store.rehydrate_journal_file,
                    [(planned.shadow_id, store.tier_root(planned.target)) for planned in pending],
                )
            for planned in pending:
                try:
                    results.append(_rehydrate_one(store, planned, shadow, sidecar))
                except DestinationExistsError as error:
                    results.append(replace(planned, status="conflict", detail=str(error)))
                except (StrataError, OSError) as error:
                    results.append(replace(planned, status="error", detail=str(error)))
                if progress:
                    progress(1)
        finally:
            shadow.close()
        sidecar.save()
        store.rehydrate_journal_file.unlink(missing_ok=True)
        if any(result.status == "rehydrated" and result.target is Tier.ACTIVE for result in results):
            store.regenerate_index()
    return results


def _rehydrate_one(store, planned: FileResult, shadow, sidecar) -> FileResult:
    entry = shadow.find(planned.shadow_id)
    if entry is None:
        raise StrataFileNotFoundError(planned.shadow_id, "the shadow index")
    source = blob_file(store, entry)
    blob = read_blob(source)
    destination = store.file_path(planned.target, blob.original_path)
    try:
        create_file_exclusively(destination, blob.content.encode("utf-8"))
    except DestinationExistsError:
        # A rehydration killed after writing the file but before dropping the shadow row is finished here.
        if not holds_exactly(destination, blob.content):
            raise
    if planned.target is Tier.COOLED:
        sidecar.start_tracking(planned.path, time.time())
    shadow.remove([entry.id])
    source.unlink(missing_ok=True)
    return replace(planned, status="rehydrated")


def blob_file(store: StrataStore, entry: ShadowEntry) -> Path:
    """The blob of a shadow row, looked up by file name in this store's archive folder.

    The reference stored relative or absolute paths (B-21); by name it works from any cwd and after the
    store moved, and a tampered `archive_path` cannot point outside the archive.
    """
    return store.archive_root / Path(entry.archive_path.replace("\\", "/")).name


def create_file_exclusively(destination: Path, data: bytes) -> None:
    """Write a temp file, fsync, then hard-link it into place: atomic, and fails if `destination` exists."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path(destination)
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        move_without_overwrite(temp, destination)
    finally:
        temp.unlink(missing_ok=True)


# Maintenance --------------------------------------------------------------------------------------------
@dataclass
class MaintenanceReport:
    promoted: list[FileResult]
    migrated: list[FileResult]
    evicted: list[FileResult]

    def totals(self) -> dict[str, int]:
        return {
            "total_promoted": sum(r.status in ("promoted", "would_promote") for r in self.promoted),
            "total_migrated": sum(r.status in ("migrated", "would_migrate") for r in self.migrated),
            "total_evicted": sum(r.status in ("evicted", "would_evict") for r in self.evicted),
        }


def run_maintenance(store: StrataStore, dry_run: bool) -> MaintenanceReport:
    """Promote, then migrate, then evict (the reference's order), all under one hold of the lock."""
    with store.lock():
        promoted = plan_promote(store)
        if not dry_run:
            promoted = apply_promote(store, promoted)
        migrated = plan_migrate(store)
        if not dry_run:
            migrated = apply_migrate(store, migrated)
        evicted = plan_evict(store, check_sizes=dry_run)
        if not dry_run:
            evicted = apply_evict(store, evicted)
    return MaintenanceReport(promoted, migrated, evicted)
