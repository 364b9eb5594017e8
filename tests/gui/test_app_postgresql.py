"""The app opens a memory kept in PostgreSQL by URL, as it opens a file."""

from __future__ import annotations

import json

import pytest

from stratagate.snapshot import normalize_snapshot
from stratagate.storage.sql import open_backend
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT
from tests.postgres_server import fresh_database


@pytest.mark.postgres
def test_open_postgresql_url(make_window, postgres_server):
    url = fresh_database(postgres_server, "gui")
    snapshot = normalize_snapshot(json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"])
    backend = open_backend(url)
    backend.import_namespace(REFERENCE_NAMESPACE, snapshot)
    backend.close()

    window = make_window()
    window.open_location(url)
    assert window.wait_idle()
    assert window.memory is not None and window.memory.namespace == REFERENCE_NAMESPACE
    assert window.badge.text() == "WRITABLE"  # no file, so no sha256
    assert window.events.model.total == 12
    assert [bar[0] for bar in window.timeline.plot.bars] == ["blk_25", "blk_50", "blk_82"]
    assert window._turn_label.text() == "turn 40"
