"""A read-only open of a PostgreSQL database without its search index: the index built into the outside cache
follows later commits, and a database re-created at the same URL never meets the cache of the old one."""

from __future__ import annotations

from typing import Any

import psycopg

from stratagate import memory
from stratagate.storage import search_tables
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_NAMESPACE as NS
from tests.postgres_server import SOCKET_PORT, PostgresServer, fresh_database


def _import_without_index(url: str, snapshot: dict[str, Any], revision: int) -> None:
    with open_backend(url) as backend:
        backend.import_namespace(NS, snapshot, revision)
        with backend.engine.begin() as connection:
            for table in search_tables.SEARCH_TABLES:  # as a database written before the index existed
                connection.execute(table.delete())


def _retitle(url: str, title: str) -> str:
    """Give the first event `title` in one commit (from an open of its own); returns the event's id."""
    with open_backend(url) as writer:
        key = writer.query_keys(NS, "events")[0]
        record = writer.fetch(NS, "events", [key])[0]
        changes = ChangeSet()
        changes.upsert("events", {**record, "title": title})
        writer.commit(NS, changes, writer.load_space(NS)["revision"])
    return key


def _found(reader: memory.StrataGate, query: str) -> list[str]:
    return [hit.id for hit in reader.search_events(query)]


def test_a_read_only_open_with_an_outside_index_sees_another_writers_commit(postgres_server, reference_v7) -> None:
    url = fresh_database(postgres_server, "outside_follow")
    _import_without_index(url, reference_v7["snapshot"], reference_v7["revision"])
    with memory.open(url, NS, read_only=True) as reader:
        assert _found(reader, "Zeppelin") == []
        key = _retitle(url, "Zeppelin")
        assert _found(reader, "Zeppelin") == [key]


def _recreate(server: PostgresServer, url: str) -> None:
    name = url.split("@/", 1)[1].split("?", 1)[0]
    with psycopg.connect(host=str(server.directory), port=SOCKET_PORT, user="postgres", dbname="postgres",
                         autocommit=True) as connection:
        connection.execute(f'DROP DATABASE "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def test_a_database_re_created_at_the_same_url_never_meets_the_old_cache(postgres_server, reference_v7) -> None:
    url = fresh_database(postgres_server, "outside_recreated")
    _import_without_index(url, reference_v7["snapshot"], reference_v7["revision"] - 1)
    key = _retitle(url, "Zeppelin")
    with memory.open(url, NS, read_only=True) as reader:
        assert _found(reader, "Zeppelin") == [key]  # fills the outside cache at this revision
    _recreate(postgres_server, url)
    _import_without_index(url, reference_v7["snapshot"], reference_v7["revision"] - 1)
    other = _retitle(url, "Dirigible")  # the same revision again, other content
    with memory.open(url, NS, read_only=True) as reader:
        assert _found(reader, "Zeppelin") == []
        assert _found(reader, "Dirigible") == [other]
