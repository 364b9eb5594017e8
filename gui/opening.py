"""Opening a memory for the app: runs on the database worker and gathers what the window shows first."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stratagate.errors import StorageOpenError, StrataGateError

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from stratagate.memory import StrataGate
    from stratagate.storage.sql import SqlBackend


@dataclass
class OpenedMemory:
    """An open namespace plus what the toolbar needs, gathered on the worker so the UI never queries."""

    memory: StrataGate
    location: str
    namespace: str
    read_only: bool
    namespaces: list[str] = field(default_factory=list)
    threads: list[str | None] = field(default_factory=list)
    file_sha256: str | None = None
    """Set by `hash_file` once the window has painted."""
    notice: str | None = None
    backend: SqlBackend | None = field(default=None, repr=False)
    source: str = field(default="", repr=False)
    """The location as asked for (a URL may carry its password): to reopen it, never shown or stored."""

    def close(self) -> None:
        self.memory.close()

    def hash_file(self) -> str | None:
        """The file's sha256 (None on a server). It reads the whole file, so the window asks for it in its file
        lane once the memory is shown, never before the first paint."""
        if self.backend is not None:
            self.file_sha256 = self.backend.file_sha256
        return self.file_sha256


class OpenCancelled(Exception):
    """The user cancelled the open; what it had opened is closed."""


def open_memory(
    location: str, namespace: str | None, read_only: bool, cancelled: threading.Event | None = None
) -> OpenedMemory:
    """Open `namespace` (default: the first one) of an existing StrataGate database; never creates one.

    `cancelled` is checked between the steps: once set, the open stops at the next one and closes the database.
    """
    from stratagate.memory import StrataGate
    from stratagate.storage.sql import open_backend

    def stop_if_cancelled() -> None:
        if cancelled is not None and cancelled.is_set():
            raise OpenCancelled(location)

    backend = open_backend(location, read_only=read_only, create=False)
    try:
        stop_if_cancelled()
        namespaces = backend.list_namespaces()
        stop_if_cancelled()
        if not namespaces:
            raise StorageOpenError(backend.location, "holds no memory namespace")
        if namespace is not None and namespace not in namespaces:
            raise StorageOpenError(backend.location, f"has no namespace {namespace!r} (it has {', '.join(namespaces)})")
        memory = StrataGate.open_with_backend(backend, namespace or namespaces[0])
        stop_if_cancelled()
        threads = list_threads(memory)
        stop_if_cancelled()
        return OpenedMemory(
            memory=memory,
            location=backend.location,
            namespace=memory.namespace,
            read_only=memory.read_only,
            namespaces=namespaces,
            threads=threads,
            notice=backend.notice,
            backend=backend,
            source=location,
        )
    except BaseException:
        backend.close()
        raise


def list_threads(memory: StrataGate) -> list[str | None]:
    return list(memory.thread_ids())


def shown_location(location: str) -> str:
    """A file path as is; a database URL with its password masked, for every dialog, label and message."""
    if "://" not in location:
        return location
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(location).render_as_string(hide_password=True)
    except ArgumentError:
        return location.split("://", 1)[0] + "://…"  # unparsable: show the scheme only, never the rest


def recent_entry(location: str) -> str:
    """What File ▸ Open recent keeps of a location: a file path as is, a database URL without its password
    (reopening asks for it unless PGPASSWORD, ~/.pgpass or the server make it unneeded)."""
    url = _parsed_url(location)
    if url is None:
        return location
    from sqlalchemy.engine import URL

    # `URL.set(password=None)` keeps the password (None means "unchanged"), so build the URL without it.
    bare = URL.create(url.drivername, url.username, None, url.host, url.port, url.database, url.query)
    return bare.render_as_string(hide_password=False)


def is_server_url(location: str) -> bool:
    return _parsed_url(location) is not None


def has_password(location: str) -> bool:
    url = _parsed_url(location)
    return url is not None and url.password is not None


def with_password(location: str, password: str) -> str:
    """The database URL `location` with `password` put in."""
    url = _parsed_url(location)
    if url is None:
        raise ValueError("only a database URL takes a password")
    return url.set(password=password).render_as_string(hide_password=False)


def needs_password(location: str, error: BaseException) -> bool:
    """Whether `error`, from opening the database URL `location`, is the server refusing the login for a missing
    or wrong password: then the app asks for one instead of reporting a failure."""
    if _parsed_url(location) is None:
        return False
    messages = []
    while error is not None:
        messages.append(str(error))
        error = error.__cause__
    text = " ".join(messages)
    return "no password supplied" in text or "password authentication failed" in text


def _parsed_url(location: str) -> URL | None:
    """A server database URL (None for a file path, an SQLite URL or something unparsable)."""
    if "://" not in location:
        return None
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(location)
    except ArgumentError:
        return None
    return None if url.get_backend_name() == "sqlite" else url


def describe_open_error(error: BaseException) -> str:
    """The reason to show in a dialog: our own errors already name the file and the fault (a failed open's
    dialog names the file in its first line, so only the reason follows)."""
    if isinstance(error, StorageOpenError):
        return error.reason
    if isinstance(error, StrataGateError):
        return str(error)
    return f"{type(error).__name__}: {error}"
