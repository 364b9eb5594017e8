"""The Strata data directory: where each tier lives, listing and reading files, the lock, the sidecars.

A store is compatible with the reference's: `active/`, `cooled/`, `archive/`, `stratum_2_access.json`,
`stratum_3_shadow.db`, `strata.json`, `strata.log`, `strata.pid`, `strata_cost.log`, all directly under the
base dir. This module never moves files between tiers; `janitor` does.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from operator import attrgetter
from pathlib import Path, PurePosixPath

from stratagate.strata import rehydrate_journal
from stratagate.strata.config import CONFIG_FILE, StrataConfig, check_tiers_apart, load_config, save_config
from stratagate.strata.errors import (
    FileTooLargeError,
    NotTextError,
    StoreNotFoundError,
    StrataFileNotFoundError,
    UnsafePathError,
)
from stratagate.strata.evict_journal import JOURNAL_FILE, finish_interrupted_eviction
from stratagate.strata.fsutil import atomic_write_text, store_lock
from stratagate.strata.index_md import INDEX_NAME, regenerate_index
from stratagate.strata.paths import canonical_relative_path, inside_tier
from stratagate.strata.shadow import ShadowIndex
from stratagate.strata.sidecar import SIDECAR_FILE, AccessRecord, AccessSidecar

LOCK_FILE = "strata.lock"
QUARANTINE_DIR = "quarantine"
LOG_FILE = "strata.log"
PID_FILE = "strata.pid"
COST_LOG_FILE = "strata_cost.log"


class Tier(StrEnum):
    ACTIVE = "active"
    COOLED = "cooled"
    ARCHIVE = "archive"


@dataclass(frozen=True)
class TierFile:
    """One file of the active or cooled tier (access data only for cooled files with a sidecar entry)."""

    tier: Tier
    path: str
    size: int
    modified: float
    access_count: int | None = None
    last_accessed: float | None = None


def is_temp_file(name: str) -> bool:
    """Leftovers of an interrupted atomic write (`.<name>.<random>.tmp`), never treated as memory."""
    return name.startswith(".") and name.endswith(".tmp")


_name = attrgetter("name")


def walk_files(root: Path) -> Iterator[tuple[str, os.DirEntry]]:
    """Every entry below `root` that is a regular file or a symlink, as (relative path, entry), sorted.

    Symlinked folders are not entered, so a walk never leaves the tree.
    """
    stack = [("", root)]
    while stack:
        prefix, folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=_name)
        except FileNotFoundError:
            continue
        subfolders = []
        for entry in entries:
            relative = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                subfolders.append((relative + "/", Path(entry.path)))
            elif not is_temp_file(entry.name):
                yield relative, entry
        stack.extend(reversed(subfolders))


def matches_any(relative_path: str, patterns: list[str]) -> bool:
    """`Path.match` semantics (right-anchored); plain `*.md` patterns only look at the file name."""
    name = relative_path.rsplit("/", 1)[-1]
    return any(
        PurePosixPath(relative_path).match(pattern) if "/" in pattern else fnmatch.fnmatchcase(name, pattern)
        for pattern in patterns
    )


class StrataStore:
    def __init__(self, base_dir: Path, config: StrataConfig | None = None):
        self.base_dir = Path(base_dir).expanduser().absolute()
        self.config = config if config is not None else load_config(self.base_dir)
        check_tiers_apart(self.config_file, self.config)
        self._lock_depth = 0
        self._sidecar_cache: tuple[tuple[int, int, int], dict[str, AccessRecord]] | None = None

    # Where things are -------------------------------------------------------------------------------
    @property
    def active_root(self) -> Path:
        return self.base_dir / self.config.active_dir

    @property
    def cooled_root(self) -> Path:
        return self.base_dir / self.config.cooled_dir

    @property
    def archive_root(self) -> Path:
        return self.base_dir / self.config.stratum_3_archive

    @property
    def shadow_file(self) -> Path:
        return self.base_dir / self.config.stratum_3_shadow_db

    @property
    def quarantine_root(self) -> Path:
        """Where eviction puts cooled files it cannot archive (not UTF-8), unchanged."""
        return self.base_dir / QUARANTINE_DIR

    @property
    def sidecar_file(self) -> Path:
        return self.base_dir / SIDECAR_FILE

    @property
    def config_file(self) -> Path:
        return self.base_dir / CONFIG_FILE

    @property
    def lock_file(self) -> Path:
        return self.base_dir / LOCK_FILE

    @property
    def log_file(self) -> Path:
        return self.base_dir / LOG_FILE

    @property
    def pid_file(self) -> Path:
        return self.base_dir / PID_FILE

    @property
    def cost_log_file(self) -> Path:
        return self.base_dir / COST_LOG_FILE

    def tier_root(self, tier: Tier) -> Path:
        return {
            Tier.ACTIVE: self.active_root,
            Tier.COOLED: self.cooled_root,
            Tier.ARCHIVE: self.archive_root,
        }[tier]

    # Life cycle of the store itself -----------------------------------------------------------------
    def exists(self) -> bool:
        return self.active_root.is_dir()

    def require_exists(self) -> None:
        if not self.exists():
            raise StoreNotFoundError(self.base_dir)

    def init(self) -> None:
        """Create the three tier folders, `strata.json` (if absent) and `active/index.md`."""
        for root in (self.active_root, self.cooled_root, self.archive_root):
            root.mkdir(parents=True, exist_ok=True)
        if not self.config_file.exists():
            save_config(self.base_dir, self.config)
        self.regenerate_index()

    def reload_config(self) -> None:
        self.config = load_config(self.base_dir)

    @property
    def evict_journal_file(self) -> Path:
        return self.base_dir / JOURNAL_FILE

    @property
    def rehydrate_journal_file(self) -> Path:
        return self.base_dir / rehydrate_journal.JOURNAL_FILE

    @contextlib.contextmanager
    def lock(self, timeout: float = 30.0, recover: bool = True) -> Iterator[None]:
        """The store-wide write lock; re-entrant within one `StrataStore`.

        Taking it first finishes an eviction a dead process left half-done (`recover=False` skips that,
        for the shadow-index rebuild, which finishes it itself).
        """
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with store_lock(self.lock_file, timeout):
            self._lock_depth = 1
            try:
                if recover and self.evict_journal_file.exists():
                    self.finish_interrupted_eviction(rebuild_shadow=False)
                if recover and self.rehydrate_journal_file.exists():
                    shadow = self.shadow()
                    try:
                        rehydrate_journal.finish_interrupted_rehydration(
                            self.rehydrate_journal_file, self.archive_root, shadow
                        )
                    finally:
                        shadow.close()
                yield
            finally:
                self._lock_depth = 0

    def finish_interrupted_eviction(self, rebuild_shadow: bool) -> int:
        shadow = None if rebuild_shadow else self.shadow()
        try:
            return finish_interrupted_eviction(
                self.evict_journal_file, self.cooled_root, self.archive_root, shadow
            )
        finally:
            if shadow is not None:
                shadow.close()

    def sidecar(self) -> AccessSidecar:
        """The access sidecar, parsed once per version of the file (a plan and its apply share the parse).

        Every save replaces the file atomically, so (inode, mtime, size) names a version; each caller gets
        its own copy of the (immutable) records.
        """
        try:
            stat = os.stat(self.sidecar_file)
        except FileNotFoundError:
            return AccessSidecar(self.sidecar_file, on_save=self._remember_sidecar)
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if self._sidecar_cache is None or self._sidecar_cache[0] != version:
            self._sidecar_cache = (version, AccessSidecar(self.sidecar_file).records)
        return AccessSidecar(
            self.sidecar_file,
            records=dict(self._sidecar_cache[1]),
            dirty=False,
            on_save=self._remember_sidecar,
        )

    def _remember_sidecar(self, records: dict[str, AccessRecord]) -> None:
        """The records just saved are the new file's content, so the next `sidecar()` skips parsing it
        (a migration's 20,000 entries cost eviction's plan about 4 µs per file). Saves happen under the
        store lock: no other writer comes between the write and this stat."""
        stat = os.stat(self.sidecar_file)
        self._sidecar_cache = ((stat.st_ino, stat.st_mtime_ns, stat.st_size), dict(records))

    def shadow(self, create: bool = True) -> ShadowIndex:
        return ShadowIndex(self.shadow_file, create=create)

    def regenerate_index(self) -> Path:
        self.active_root.mkdir(parents=True, exist_ok=True)
        return regenerate_index(self.active_root)

    # Files ------------------------------------------------------------------------------------------
    def is_generated(self, tier: Tier, relative_path: str) -> bool:
        """`active/index.md` is rebuilt from the other files: never moved, searched or overwritten (B-7)."""
        return tier is Tier.ACTIVE and relative_path == INDEX_NAME

    def file_path(self, tier: Tier, relative_path: str) -> Path:
        """The checked on-disk path of a file of the active or cooled tier."""
        return inside_tier(self.tier_root(tier), relative_path)

    def list_files(self, tier: Tier) -> list[TierFile]:
        """Files of the active or cooled tier, sorted by path, with sidecar access data for cooled files."""
        records = self.sidecar().records if tier is Tier.COOLED else {}
        files = []
        for relative, entry in walk_files(self.tier_root(tier)):
            if entry.is_symlink() or self.is_generated(tier, relative):
                continue
            stat = entry.stat(follow_symlinks=False)
            record = records.get(relative)
            files.append(
                TierFile(
                    tier,
                    relative,
                    stat.st_size,
                    stat.st_mtime,
                    record.access_count if record else None,
                    record.last_accessed if record else None,
                )
            )
        return files

    def list_dir(self, relative_path: str = "") -> list[dict[str, object]]:
        """Direct children of an active folder, as the reference's `list_dir`: sorted by name, each
        `{name, path, type, size, modified}` (ISO-8601 UTC); a missing folder gives `[]`."""
        folder = self.file_path(Tier.ACTIVE, relative_path) if relative_path.strip("/.") else self.active_root
        if not folder.is_dir():
            return []
        entries = []
        for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
            if is_temp_file(entry.name):
                continue
            stat = entry.stat(follow_symlinks=False)
            is_dir = entry.is_dir(follow_symlinks=False)
            entries.append(
                {
                    "name": entry.name,
                    "path": Path(entry.path).relative_to(self.active_root).as_posix(),
                    "type": "directory" if is_dir else "file",
                    "size": 0 if is_dir else stat.st_size,
                    "modified": datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(),
                }
            )
        return entries

    def read_text(self, tier: Tier, relative_path: str, limit: int | None = None) -> str:
        """A file's text, without side effects. `limit` caps the bytes read (FileTooLargeError above it)."""
        file = self.file_path(tier, relative_path)
        if not file.is_file():
            raise StrataFileNotFoundError(relative_path, f"the {tier} tier ({self.tier_root(tier)})")
        size = file.stat().st_size
        if limit is not None and size > limit:
            raise FileTooLargeError(file, size, limit)
        try:
            return file.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise NotTextError(file) from None

    def write(self, relative_path: str, content: str) -> Path:
        """Write a file of the active tier atomically and refresh the index."""
        relative = canonical_relative_path(relative_path)
        if self.is_generated(Tier.ACTIVE, relative):
            raise UnsafePathError(relative_path, "index.md is generated by Strata and cannot be written")
        with self.lock():
            target = self.file_path(Tier.ACTIVE, relative)
            atomic_write_text(target, content)
            self.regenerate_index()
        return target

    def counts(self) -> dict[str, int]:
        """Files per tier (the generated index excluded) and shadow rows — for `status`; creates nothing."""
        shadow = self.shadow(create=False)
        try:
            archived = shadow.count()
        finally:
            shadow.close()
        return {
            "active": len(self.list_files(Tier.ACTIVE)),
            "cooled": len(self.list_files(Tier.COOLED)),
            "archived": archived,
        }
