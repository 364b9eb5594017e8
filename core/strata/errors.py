"""Errors of the Strata three-tier store. Each names the file (or relative path) at fault."""

from __future__ import annotations

from pathlib import Path

from stratagate.errors import StrataGateError


class StrataError(StrataGateError):
    """Base class of every error the Strata store raises on purpose."""


class UnsafePathError(StrataError):
    """A path would leave its tier: `..`, an absolute path, or a symlink pointing out of the store."""

    def __init__(self, path: str, reason: str):
        self.path = path
        super().__init__(f"{path}: {reason}")


class DestinationExistsError(StrataError):
    """Moving a file would overwrite another one; nothing was moved."""

    def __init__(self, destination: Path):
        self.destination = destination
        super().__init__(f"{destination}: a file already exists here; refusing to overwrite it")


class StrataFileNotFoundError(StrataError):
    def __init__(self, path: str, where: str = "any tier"):
        self.path = path
        super().__init__(f"{path}: not found in {where}")


class NotTextError(StrataError):
    """A file is not valid UTF-8 text, so it cannot be read as markdown or archived as a JSON blob."""

    def __init__(self, file: Path):
        self.file = file
        super().__init__(f"{file}: not UTF-8 text")


class FileTooLargeError(StrataError):
    def __init__(self, file: Path, size: int, limit: int):
        self.file = file
        super().__init__(f"{file}: {size:,} bytes is over the {limit:,}-byte limit for archiving")


class CorruptSidecarError(StrataError):
    """`stratum_2_access.json` cannot be parsed; `stratagate strata repair-sidecar` rebuilds it."""

    def __init__(self, file: Path, reason: str):
        self.file = file
        super().__init__(
            f"{file}: corrupt access sidecar ({reason}); run `stratagate strata repair-sidecar` "
            "to rebuild it (a backup of the damaged file is kept)"
        )


class CorruptShadowIndexError(StrataError):
    """The shadow SQLite index is damaged; `stratagate strata rebuild-index` rebuilds it from the blobs."""

    def __init__(self, file: Path, reason: str):
        self.file = file
        super().__init__(
            f"{file}: corrupt shadow index ({reason}); run `stratagate strata rebuild-index` "
            "to rebuild it from the archive blobs"
        )


class CorruptBlobError(StrataError):
    def __init__(self, file: Path, reason: str):
        self.file = file
        super().__init__(f"{file}: unreadable archive blob ({reason})")


class StrataConfigError(StrataError):
    def __init__(self, file: Path, field: str, reason: str):
        self.file = file
        self.field = field
        super().__init__(f"{file}: field {field!r}: {reason}")


class StoreBusyError(StrataError):
    def __init__(self, lock_file: Path, timeout: float):
        super().__init__(f"{lock_file}: another Strata process held the store lock for over {timeout:g} s")


class DaemonRunningError(StrataError):
    def __init__(self, pid_file: Path, pid: int | None):
        self.pid = pid
        super().__init__(f"{pid_file}: a Strata daemon is already running (pid {pid})")


class StoreNotFoundError(StrataError):
    def __init__(self, base_dir: Path):
        self.base_dir = base_dir
        super().__init__(
            f"{base_dir}: no Strata store here (no 'active' folder); run `stratagate strata init` first"
        )


class RewriteWorkerDied(StrataError):
    """Eviction's forked rewrite worker (`rewrite_worker`) died or was killed during a run."""

    def __init__(self, pid: int, how: str):
        self.pid = pid
        super().__init__(
            f"eviction's rewrite worker (pid {pid}) {how}; this run stopped and the next process to take "
            "the store lock finishes it from the journal"
        )
