"""A large event list: ids held packed, sorted by the database, first rows before live follow's census."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from stratagate.memory import open as open_memory
from stratagate.snapshot import normalize_snapshot
from stratagate.storage.packed_keys import PackedKeys
from stratagate.storage.sql import open_backend
from stratagate_gui.models.lazy_table import PLACEHOLDER
from stratagate_gui.views.events import EVENT_COLUMNS, FIRST_PAGE, event_rows, list_events
from stratagate_gui.widgets.tables import sort_key
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_SNAPSHOT

EVENTS = 3_000


@pytest.fixture(scope="module")
def large_memory(tmp_path_factory) -> Path:
    """The reference memory's events copied to 3,000, each copy's title numbered (built once per module)."""
    snapshot = normalize_snapshot(json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"])
    originals = [event for event in snapshot["events"] if not event.get("supersededBy")]
    extra = []
    for number in range(EVENTS - len(snapshot["events"])):
        event = copy.deepcopy(originals[number % len(originals)])
        event["id"] = f"evt_copy_{number}"
        event["title"] = f"{event['title']} #{number}"
        event["temporal"].pop("supersedesEventIds", None)
        extra.append(event)
    snapshot["events"] += extra
    path = tmp_path_factory.mktemp("large") / "large.sqlite"
    backend = open_backend(path)
    try:
        backend.import_namespace(REFERENCE_NAMESPACE, snapshot)
    finally:
        backend.close()
    return path


def test_every_column_sorts_in_sql_as_its_shown_values_sort(large_memory: Path):
    """The database's order by each column equals sorting the built rows by what they show."""
    memory = open_memory(large_memory, REFERENCE_NAMESPACE, read_only=True)
    try:
        ids = list(memory.event_ids())
        shown = dict(zip(ids, event_rows(memory, ids), strict=True))
        for column, name in enumerate(EVENT_COLUMNS):
            for descending in (False, True):
                listed = list_events(memory, {}, (column, descending))
                assert isinstance(listed, PackedKeys) and sorted(listed) == sorted(ids), name
                keys = [sort_key(shown[identifier][column]) for identifier in listed]
                assert keys == sorted(keys, reverse=descending), (name, descending)
        assert list(list_events(memory, {"pinned": "pinned"}, None)) == [
            identifier for identifier in ids if shown[identifier][EVENT_COLUMNS.index("Pinned")]
        ]
    finally:
        memory.close()


def test_first_rows_come_before_the_census_and_hidden_views_do_not_read(qtbot, make_window, large_memory: Path):
    window = make_window()
    model = window.events.model
    window.open_location(str(large_memory), read_only=True)
    census_at_first_row = []

    def first_row_built() -> bool:  # what painting the event list does: ask for its first row until built
        if model.rowCount() and model.index(0, 0).data() not in (None, PLACEHOLDER):
            census_at_first_row.append((window.follow.census, model.total))
            return True
        return False

    qtbot.waitUntil(first_row_built, timeout=20_000)
    # Live follow's census had not run yet, and only the first page of ids was read.
    assert census_at_first_row == [(None, FIRST_PAGE)]
    first_title = model.index(0, 0).data()
    assert window.curation.curation.model.total == 0  # a hidden tab lists nothing
    assert window.wait_idle(60_000)
    assert window.follow.census is not None and window.follow.census.counts["events"] == EVENTS
    assert model.total == EVENTS and model.index(0, 0).data() == first_title  # the first rows stayed built
    assert window.curation.curation.model.total == 0
    window.show_view(window.curation.curation)
    qtbot.waitUntil(lambda: window.curation.curation.model.total == EVENTS, timeout=20_000)


def test_scrolling_to_the_end_and_sorting_a_large_list(qtbot, make_window, large_memory: Path):
    window = make_window()
    window.open_location(str(large_memory), read_only=True)
    assert window.wait_idle(60_000)
    view = window.events
    window.show_view(view)
    model, table = view.model, view.table
    assert isinstance(model._ids, PackedKeys) and model.total == EVENTS
    while model.canFetchMore():
        model.fetchMore()
    table.scrollToBottom()
    last = model.id_at(EVENTS - 1)
    qtbot.waitUntil(lambda: model.index(EVENTS - 1, EVENT_COLUMNS.index("Id")).data() == last, timeout=20_000)
    assert model.row_of(last) == EVENTS - 1

    title = EVENT_COLUMNS.index("Title")
    table.sortByColumn(title, Qt.SortOrder.DescendingOrder)
    assert window.wait_idle(60_000)
    qtbot.waitUntil(lambda: model.index(0, title).data() not in (None, PLACEHOLDER), timeout=20_000)
    memory = window.memory
    titles = sorted((event.title for event in memory.get_events(list(memory.event_ids()))), key=str.casefold)
    assert model.index(0, title).data() == titles[-1] and model.total == EVENTS
