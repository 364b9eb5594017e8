"""Storage suite fixtures: every backend test runs on an SQLite file and on the session's PostgreSQL server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratagate.snapshot import normalize_snapshot
from stratagate.storage.sql import SqlBackend, open_backend
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT
from tests.postgres_server import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a new, empty StrataGate database can be created: a file path or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.sqlite")
    return fresh_database(request.getfixturevalue("postgres_server"))


@pytest.fixture
def backend(database: str) -> Iterator[SqlBackend]:
    opened = open_backend(database)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def reference_v7() -> dict[str, Any]:
    """The reference fixture's snapshot upgraded to v7, and its revision."""
    data = json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]
    return {"snapshot": normalize_snapshot(data["snapshot"]), "revision": data["revision"]}
