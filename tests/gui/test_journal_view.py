"""The journal view lists a real file's curation journal and names the first tampered entry on Verify."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from sqlalchemy import create_engine

from stratagate import journal
from stratagate_gui.curation.journal_view import BAD_ENTRY_COLOR, JournalView
from stratagate_gui.workers import DatabaseWorker

NAMESPACE = "project:atlas"


@pytest.fixture
def journaled_engine(reference_db_copy: Path):
    engine = create_engine(f"sqlite:///{reference_db_copy}")
    with engine.begin() as connection:
        journal.append_entries(
            connection,
            NAMESPACE,
            [
                journal.new_entry("reviewer", "pin", ["evt_a"], {"pinned": False}, {"pinned": True}),
                journal.new_entry(
                    "reviewer", "forget", ["evt_b"], {"status": "active"}, {"status": "forgotten"}
                ),
                journal.new_entry(
                    "reviewer", "undo forget", ["evt_b"], {"status": "forgotten"}, {"status": "active"}
                ),
            ],
        )
    yield engine
    engine.dispose()


@pytest.fixture
def view(qtbot, journaled_engine):
    worker = DatabaseWorker()
    widget = JournalView(worker)
    qtbot.addWidget(widget)
    widget.set_source(
        lambda: journal.read_entries(journaled_engine, NAMESPACE),
        lambda: journal.verify(journaled_engine, NAMESPACE),
    )
    qtbot.waitUntil(lambda: widget.model.rowCount() == 3)
    yield widget
    worker.shutdown()


def test_lists_entries_in_chain_order(view):
    model = view.model
    assert [model.index(row, 0).data() for row in range(3)] == [1, 2, 3]
    assert model.index(1, 3).data() == "forget"
    assert model.index(1, 4).data() == "evt_b"
    assert model.index(1, 5).data() == "status: active → forgotten"
    assert view.status.text() == "3 entries"


def test_verify_reports_an_intact_chain(qtbot, view):
    with qtbot.waitSignal(view.verified) as signal:
        view.verify_button.click()
    assert signal.args[0].ok
    assert view.status.text().startswith("✔ journal OK: 3 entries")


def test_verify_names_and_selects_the_first_edited_entry(qtbot, view, reference_db_copy: Path):
    with closing(sqlite3.connect(reference_db_copy)) as connection, connection:
        connection.execute("UPDATE stratagate_curation_journal SET actor = 'mallory' WHERE seq = 2")
    connection.close()
    view.refresh()
    qtbot.waitUntil(lambda: view.model.index(1, 2).data() == "mallory")
    with qtbot.waitSignal(view.verified) as signal:
        view.verify_button.click()
    result = signal.args[0]
    assert (result.ok, result.bad_seq) == (False, 2)
    assert (
        view.status.text()
        == f"✘ journal of {NAMESPACE}: entry 2 was edited (its hash does not match its content)"
    )
    assert view.table.selectionModel().selectedRows()[0].row() == 1
    assert view.model.index(1, 0).data(Qt.ItemDataRole.BackgroundRole).name() == BAD_ENTRY_COLOR


def test_without_a_memory_the_buttons_are_disabled(qtbot):
    worker = DatabaseWorker()
    widget = JournalView(worker)
    qtbot.addWidget(widget)
    assert not widget.verify_button.isEnabled() and not widget.refresh_button.isEnabled()
    assert widget.status.text() == "No memory open"
    worker.shutdown()


def test_a_header_click_sorts_the_journal_and_a_refresh_keeps_the_order(qtbot, view):
    view.table.sortByColumn(3, Qt.SortOrder.AscendingOrder)  # Action
    model = view.model
    assert [model.index(row, 3).data() for row in range(3)] == ["forget", "pin", "undo forget"]
    view.refresh()
    qtbot.waitUntil(lambda: view.status.text() == "3 entries")
    assert [model.index(row, 0).data() for row in range(3)] == [2, 1, 3]
    view.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the header's third click: chain order
    assert [model.index(row, 0).data() for row in range(3)] == [1, 2, 3]


def test_changes_are_shown_in_human_values_with_the_raw_json_in_the_tooltip(view):
    cell = view.model.index(0, 5)
    assert cell.data() == "pinned: no → yes"
    assert '{"pinned": false}' in view.model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)


def test_the_action_facet_shows_only_its_entries_and_survives_a_refresh_and_a_sort(qtbot, view):
    assert [view.action_filter.itemText(n) for n in range(view.action_filter.count())] == [
        "(all)", "forget", "pin", "undo forget"]
    view.action_filter.setCurrentText("forget")

    def shown() -> list[int]:
        return [view.model.index(row, 0).data() for row in range(3) if not view.table.isRowHidden(row)]

    assert shown() == [2]
    view.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    assert shown() == [2]
    view.refresh()
    qtbot.waitUntil(lambda: view.status.text() == "3 entries")
    assert shown() == [2]
    view.action_filter.setCurrentText("(all)")
    assert sorted(shown()) == [1, 2, 3]
