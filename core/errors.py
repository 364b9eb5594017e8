"""Errors the engine raises. Every message names the file, id or field at fault."""


class StrataGateError(Exception):
    """Base class of every error this package raises on purpose."""


class StorageConflictError(StrataGateError):
    """Another writer committed first: the caller's revision is stale and nothing was written."""

    def __init__(self, namespace: str, expected_revision: int, actual_revision: int | None):
        self.namespace = namespace
        self.expected_revision = expected_revision
        self.actual_revision = actual_revision
        found = "missing" if actual_revision is None else actual_revision
        super().__init__(f"Storage revision conflict for {namespace}: expected {expected_revision}, found {found}")


class StorageOpenError(StrataGateError):
    """A database could not be opened: not StrataGate, unsupported version, corrupt, unreachable."""

    def __init__(self, location: str, reason: str):
        self.location = location
        self.reason = reason
        super().__init__(f"{location}: {reason}")


class ReadOnlyError(StrataGateError):
    """A write was attempted on a memory opened read-only (forensic mode or a newer schema)."""
