"""PostgreSQL: every commit notifies, so a reader tells that nothing changed without a round trip.

A kept search answer is good while the database holds the revision it was read at; confirming that is a
round trip to the server (100 µs or more), several times what answering costs. So a v7 database on
PostgreSQL carries one trigger, `stratagate_revision_notify` on `memory_spaces`: any statement writing that
table (every commit bumps a namespace's revision there; creating, importing or replacing a namespace writes
its row) sends `NOTIFY stratagate_revision` in the same transaction, whoever the writer is. A reader holds a
connection of its own that `LISTEN`s, and before trusting a kept answer drains what arrived on its socket
without blocking (`PostgresChangeWatch.marker`): no notification, no commit.

A writable open creates the trigger where it is missing (`install`); its function only notifies, and the
check for schema objects StrataGate did not create accepts it only with exactly this body
(`schema_objects`). A database without it (an older one opened read-only, or a role that may not create
triggers) is read with the round trip, as before. What is not covered: a notification travels
asynchronously, so another process's commit is seen once its notification has reached this process (the
server sends it as the commit returns; it arrives within a fraction of a millisecond).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

CHANNEL = "stratagate_revision"
TRIGGER = "stratagate_revision_notify"
FUNCTION_BODY = f" BEGIN PERFORM pg_notify('{CHANNEL}', ''); RETURN NULL; END; "
"""The trigger function's whole body (`prosrc`): what the schema-object check compares."""

OURS = f"""
SELECT 1 FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_language l ON l.oid = p.prolang
  WHERE t.tgname = '{TRIGGER}' AND p.proname = '{TRIGGER}' AND c.relname = 'memory_spaces'
    AND n.nspname = current_schema() AND l.lanname = 'plpgsql' AND p.prosrc = %(body)s
"""
"""A row when the trigger is there and runs exactly this package's function."""


def installed(connection: Any) -> bool:
    """Whether the database holds the trigger with exactly this body (`connection`: SQLAlchemy's or psycopg's)."""
    if isinstance(connection, Connection):
        return connection.exec_driver_sql(OURS, {"body": FUNCTION_BODY}).first() is not None
    return connection.execute(OURS, {"body": FUNCTION_BODY}).fetchone() is not None


def install(engine: Engine) -> None:
    """Create the trigger and its function where missing (a writable open). A role that may not create them,
    or another open creating them at the same moment, leaves the database as it is: readers then read their
    revision with a round trip."""
    try:
        with engine.begin() as connection:
            if installed(connection):
                return
            connection.exec_driver_sql(
                f"CREATE OR REPLACE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS "
                f"$body${FUNCTION_BODY}$body$")
            connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {TRIGGER} ON memory_spaces")
            connection.exec_driver_sql(f"CREATE TRIGGER {TRIGGER} AFTER INSERT OR UPDATE OR DELETE ON memory_spaces "
                                       f"FOR EACH STATEMENT EXECUTE FUNCTION {TRIGGER}()")
    except DBAPIError:
        pass


class PostgresChangeWatch:
    """A connection that LISTENs on `CHANNEL`; its `marker` counts the notifications received. Opened at the
    first `marker`; None from then on when the database has no trigger or the connection was lost."""

    def __init__(self, engine: Engine):
        self._engine = engine
        self._connection: Any = None
        self._received = 0
        self._usable = True
        self._lock = threading.Lock()
        """One reader of the socket at a time: the app reads from a worker thread too."""

    def marker(self) -> int | None:
        with self._lock:
            if not self._usable:
                return None
            try:
                if self._connection is None:
                    self._connection = self._listen()
                    if self._connection is None:
                        return None
                pgconn = self._connection.pgconn
                pgconn.consume_input()  # reads what the socket holds, without waiting
                while pgconn.notifies() is not None:
                    self._received += 1
                if self._connection.broken or self._connection.closed:
                    raise ConnectionError("the listening connection is lost")
            except Exception:  # in doubt: every later answer is confirmed by a read
                self._give_up()
                return None
            return self._received

    def _listen(self) -> Any:
        """The listening connection, LISTENing before the trigger is checked (a commit after the check then
        notifies it); None, and no later attempt, without the trigger."""
        import psycopg

        arguments, options = self._engine.dialect.create_connect_args(self._engine.url)
        connection = psycopg.connect(*arguments, **options, autocommit=True)
        connection.execute(f"LISTEN {CHANNEL}")
        if not installed(connection):
            connection.close()
            self._usable = False
            return None
        return connection

    def _give_up(self) -> None:
        self._usable = False
        if self._connection is not None:
            with contextlib.suppress(Exception):  # closing a lost connection says nothing more
                self._connection.close()
            self._connection = None

    def close(self) -> None:
        with self._lock:
            self._give_up()
