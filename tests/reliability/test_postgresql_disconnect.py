"""A PostgreSQL connection lost in the middle of a write: reported as a StrataGateError naming the database,
and the same call, retried, stores it exactly once.

A second connection runs `pg_terminate_backend` on the writer's server process at a chosen moment: just before
a row of the mutation is written (mid-transaction: "nothing was written"), or just before COMMIT is sent (the
client cannot tell whether the server committed: `CommitOutcomeUnknownError`). And a proxy between client and
server drops the connection *after* the server answered COMMIT, so the write is stored while the client sees
the connection fail: the error says so, and a retry with the same receipt id stores nothing twice.
"""

from __future__ import annotations

import selectors
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

import stratagate
from stratagate.errors import CommitOutcomeUnknownError, StorageConflictError, StrataGateError
from tests.postgres_server import SOCKET_PORT, fresh_database

NAMESPACE = "dropped"
pytestmark = pytest.mark.postgres


def _terminate(server: Any, backend_pid: int) -> None:
    with psycopg.connect(host=str(server.directory), port=SOCKET_PORT, user="postgres", dbname="postgres",
                         autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", [backend_pid])


def _kill_once(server: Any, memory: stratagate.StrataGate, hook: str, wanted: Callable[[str], bool]) -> list[str]:
    """Arm a one-shot kill of the writer's server process at `hook` ("before_cursor_execute" on the first
    statement `wanted` accepts, or "commit"); returns the list the killed statements are recorded in."""
    killed: list[str] = []
    engine = memory.backend.engine

    def kill(connection: Any, *arguments: Any) -> None:
        statement = arguments[1] if hook == "before_cursor_execute" else "COMMIT"
        if killed or not wanted(statement):
            return
        killed.append(statement)
        _terminate(server, connection.connection.dbapi_connection.info.backend_pid)

    event.listen(engine, hook, kill)
    return killed


def _mid_transaction(statement: str) -> bool:
    return statement.lstrip().upper().startswith("INSERT INTO MESSAGES")


@pytest.mark.parametrize(("hook", "wanted"), [("before_cursor_execute", _mid_transaction), ("commit", lambda _s: True)],
                         ids=["mid-transaction", "at-commit"])
def test_a_killed_connection_rolls_back_and_a_retry_stores_the_turn_once(postgres_server, hook, wanted) -> None:
    url = fresh_database(postgres_server, "dropped")
    with stratagate.open(url, NAMESPACE) as memory:
        memory.append_turn("First turn.", "Ok.", receipt_id="turn-1")
        revision = memory.revision
        killed = _kill_once(postgres_server, memory, hook, wanted)

        expected = CommitOutcomeUnknownError if hook == "commit" else StrataGateError
        with pytest.raises(expected) as raised:
            memory.append_turn("Second turn.", "Ok.", receipt_id="turn-2")
        words = "may or may not be stored" if hook == "commit" else "nothing was written"
        assert killed and "dropped_" in str(raised.value) and words in str(raised.value)
        assert memory.revision == revision and memory.current_turn == 1  # nothing applied in memory

        with stratagate.open(url, NAMESPACE, read_only=True) as reader:  # nothing stored either
            assert reader.revision == revision and reader.current_turn == 1
            assert [receipt.id for receipt in reader.list_ingestion_receipts()] == ["turn-1"]

        memory.append_turn("Second turn.", "Ok.", receipt_id="turn-2")  # the user's retry
        assert memory.revision == revision + 1

    with stratagate.open(url, NAMESPACE, read_only=True) as reader:
        assert reader.current_turn == 2 and reader.revision == revision + 1
        assert [receipt.id for receipt in reader.list_ingestion_receipts()] == ["turn-1", "turn-2"]
        assert [message.content for message in reader.list_open_tail()] == ["First turn.", "Ok.", "Second turn.", "Ok."]


class CommitDroppingProxy:
    """A unix-socket proxy in front of the test server. Once `armed`, it forwards the next COMMIT of a write
    (reads run in REPEATABLE READ transactions, which end in COMMIT too) and, when the server answers that it
    committed, closes both sides without relaying the answer."""

    def __init__(self, server: Any):
        self.directory = Path(tempfile.mkdtemp(prefix="stratagate-pg-proxy-"))
        self.target = str(server.directory / f".s.PGSQL.{SOCKET_PORT}")
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(self.directory / f".s.PGSQL.{SOCKET_PORT}"))
        self.listener.listen()
        self.armed = threading.Event()
        self.dropped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, server_url: str) -> str:
        return server_url.replace(f"host={Path(self.target).parent}", f"host={self.directory}")

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.target)
            threading.Thread(target=self._relay, args=(client, upstream), daemon=True).start()

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, upstream)
        selector.register(upstream, selectors.EVENT_READ, client)
        committing = reading = False
        try:
            while True:
                for key, _ in selector.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    if committing and key.fileobj is upstream and b"COMMIT\x00" in data:
                        self.dropped.set()  # the server's CommandComplete: it has committed; the client never hears
                        return
                    key.data.sendall(data)
                    if key.fileobj is client and b"BEGIN" in data:
                        reading = b"REPEATABLE READ" in data
                    if key.fileobj is client and b"COMMIT" in data and not reading and self.armed.is_set():
                        self.armed.clear()
                        committing = True
        finally:
            client.close()
            upstream.close()

    def close(self) -> None:
        self.listener.close()
        shutil.rmtree(self.directory, ignore_errors=True)  # its socket file, left in /tmp by every run before


@pytest.fixture
def proxy(postgres_server) -> Iterator[CommitDroppingProxy]:
    proxy = CommitDroppingProxy(postgres_server)
    yield proxy
    proxy.close()


def test_a_connection_lost_after_commit_reports_an_unknown_outcome_and_a_receipt_retry_stores_once(
    postgres_server, proxy: CommitDroppingProxy
) -> None:
    url = fresh_database(postgres_server, "dropped")
    with stratagate.open(proxy.url(url), NAMESPACE) as memory:
        memory.append_turn("First turn.", "Ok.", receipt_id="turn-1")
        revision = memory.revision
        proxy.armed.set()
        with pytest.raises(CommitOutcomeUnknownError, match="may or may not be stored"):
            memory.append_turn("Second turn.", "Ok.", receipt_id="turn-2")
        assert proxy.dropped.is_set() and memory.current_turn == 1

        with stratagate.open(url, NAMESPACE, read_only=True) as reader:  # the server did commit it
            assert reader.current_turn == 2 and reader.revision == revision + 1

        # The retry the error advises (docs/reliability.md): on a conflict the memory reloads what the server
        # stored and the call is made again; the same receipt id is then recognised, nothing stored twice.
        for _attempt in range(3):
            try:
                result = memory.append_turn("Second turn.", "Ok.", receipt_id="turn-2")
                break
            except StorageConflictError:
                continue
        assert result.duplicate

    with stratagate.open(url, NAMESPACE, read_only=True) as reader:
        assert [receipt.id for receipt in reader.list_ingestion_receipts()] == ["turn-1", "turn-2"]
        assert [message.content for message in reader.list_open_tail()] == ["First turn.", "Ok.", "Second turn.", "Ok."]
