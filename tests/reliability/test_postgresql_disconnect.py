"""A PostgreSQL connection killed in the middle of a write: the write is rolled back, reported as a
StrataGateError naming the database, and the same call, retried, stores it exactly once.

A second connection runs `pg_terminate_backend` on the writer's server process at a chosen moment: just before
a row of the mutation is written (mid-transaction), or just before COMMIT is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

import stratagate
from stratagate.errors import StrataGateError
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

        with pytest.raises(StrataGateError) as raised:
            memory.append_turn("Second turn.", "Ok.", receipt_id="turn-2")
        assert killed and "dropped_" in str(raised.value) and "nothing was written" in str(raised.value)
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
