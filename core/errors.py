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


class StorageBusyError(StorageConflictError):
    """Another writer held the write lock for longer than the open's timeout: nothing was written. A conflict
    like any other: retry on the current state."""

    def __init__(self, namespace: str, location: str, detail: str):
        self.namespace = namespace
        self.expected_revision = None
        self.actual_revision = None
        StrataGateError.__init__(self, f"{location}: write to {namespace!r} waited too long for the lock held by "
                                       f"another writer, nothing was written ({detail})")


class StorageOpenError(StrataGateError):
    """A database could not be opened: not StrataGate, unsupported version, corrupt, unreachable."""

    def __init__(self, location: str, reason: str):
        self.location = location
        self.reason = reason
        super().__init__(f"{location}: {reason}")


class StorageWriteError(StrataGateError):
    """The database rejected a write (a broken key or reference, a lock held too long); nothing was written."""


class CommitOutcomeUnknownError(StorageWriteError):
    """The connection to a database server was lost after COMMIT was sent: the write may or may not be stored.
    Reopen (or `refresh`) and look, or retry with the same receipt id, which a stored write then ignores."""


class NamespaceExistsError(StrataGateError):
    """An import or copy would overwrite a namespace that already exists (pass replace to allow it)."""


class OutputPathError(StrataGateError):
    """An output cannot be written where asked: its folder is missing or read-only, or it is (or shares its
    file with) one of the command's own input databases."""


class ReadOnlyError(StrataGateError):
    """A write was attempted on a memory opened read-only (forensic mode or a newer schema)."""


class SnapshotError(StrataGateError):
    """A snapshot (or a stored namespace) is malformed: the message names the section, record and field."""


class InvalidInputError(StrataGateError, ValueError):
    """A caller passed a value of the wrong type, out of range, NaN or too large; the message names the field."""


class UnknownIdError(StrataGateError, KeyError):
    """An id (event, block, element, job) does not exist in this memory."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DuplicateIdError(StrataGateError, ValueError):
    """An id that must be unique (event, receipt) is already taken."""


class JobStateError(StrataGateError):
    """An extraction or projection job is not in the state the operation needs, or a model callback failed."""


class SchemaUpgradeRequiredError(StrataGateError):
    """A write to a schema 5/6 file that only schema 7 can hold (the file is kept in its own schema so the
    reference still opens it; `stratagate migrate` upgrades it). Nothing was written."""

    def __init__(self, location: str, schema_version: int, operation: str):
        self.location = location
        self.schema_version = schema_version
        self.operation = operation
        super().__init__(
            f"{location}: {operation} needs schema 7, and this file is schema {schema_version} (kept so the "
            f"reference StrataGate still opens it); nothing was written. Upgrade it with `stratagate migrate` "
            f"(or File > Upgrade to schema v7…) if the reference no longer needs to open it."
        )
