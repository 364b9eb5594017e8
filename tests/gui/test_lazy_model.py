"""The lazy table model holds ids, exposes them page by page, and builds only the rows a view asks for."""

from __future__ import annotations

from stratagate_gui.models.lazy_table import PLACEHOLDER, LazyIdTableModel
from stratagate_gui.workers import DatabaseWorker


def test_rows_are_paged_and_built_on_demand(qtbot):
    worker = DatabaseWorker()
    model = LazyIdTableModel(worker, ("Id", "Double"))
    built: list[list[str]] = []

    def loader(ids: list[str]) -> list[tuple[str, int]]:
        built.append(ids)
        return [(identifier, int(identifier) * 2) for identifier in ids]

    model.set_ids([str(n) for n in range(100_000)], loader)
    assert model.total == 100_000
    assert model.rowCount() == LazyIdTableModel.PAGE_SIZE
    assert model.canFetchMore()
    model.fetchMore()
    assert model.rowCount() == 2 * LazyIdTableModel.PAGE_SIZE
    assert built == []  # nothing is built until a view asks

    assert model.index(450, 1).data() == PLACEHOLDER
    qtbot.waitUntil(lambda: model.index(450, 1).data() == "900")
    assert built == [[str(n) for n in range(400, 600)]]

    row = model.row_of("99999")
    assert row == 99_999 and model.rowCount() == 100_000 and not model.canFetchMore()
    model.index(row, 0).data()
    qtbot.waitUntil(lambda: model.index(row, 1).data() == "199998")
    worker.shutdown()


def test_cache_stays_bounded_while_scrolling(qtbot):
    worker = DatabaseWorker()
    model = LazyIdTableModel(worker, ("Id",))
    model.set_ids([str(n) for n in range(50_000)], lambda ids: [(i,) for i in ids])
    model.expose_through(49_999)
    for row in range(0, 50_000, LazyIdTableModel.CHUNK_SIZE):
        model.index(row, 0).data()
    qtbot.waitUntil(lambda: worker.pending == 0)
    assert len(model._chunks) <= LazyIdTableModel.MAX_CACHED_CHUNKS
    assert model.index(49_999, 0).data() == "49999"
    worker.shutdown()


def test_rows_stay_visible_until_rebuilt_and_the_selection_follows_its_id(qtbot):
    from PySide6.QtCore import QItemSelectionModel

    worker = DatabaseWorker()
    model = LazyIdTableModel(worker, ("Id", "Version"))
    version = {"n": 1}
    model.set_ids(["a", "b", "c"], lambda ids: [(i, version["n"]) for i in ids])
    model.index(0, 1).data()
    qtbot.waitUntil(lambda: model.index(2, 1).data() == "1")
    selection = QItemSelectionModel(model)
    selection.select(model.index(2, 0), QItemSelectionModel.SelectionFlag.Select)

    version["n"] = 2
    model.update_ids(["new", "a", "b", "c"], lambda ids: [(i, version["n"]) for i in ids])
    assert model.index(3, 1).data() == "1"  # the row built before the write, not "…"
    assert model.index(0, 1).data() == PLACEHOLDER  # a new id has nothing to show yet
    assert [index.row() for index in selection.selectedIndexes()] == [3]  # "c" moved down, still selected
    qtbot.waitUntil(lambda: model.index(3, 1).data() == "2")
    worker.shutdown()


def test_a_failed_chunk_shows_its_error_on_its_rows_and_is_asked_for_again(qtbot, monkeypatch):
    from stratagate_gui.models import lazy_table

    monkeypatch.setattr(lazy_table, "FIRST_RETRY_MS", 50)
    worker = DatabaseWorker()
    model = LazyIdTableModel(worker, ("Id",))
    attempts: list[int] = []

    def flaky(ids: list[str]) -> list[tuple[str]]:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk I/O error")
        return [(i,) for i in ids]

    model.set_ids(["x", "y"], flaky)
    model.index(0, 0).data()
    qtbot.waitUntil(lambda: model.index(0, 0).data() == "⚠ OSError: disk I/O error")
    assert model.index(1, 0).data(lazy_table.Qt.ItemDataRole.ForegroundRole) == lazy_table.ERROR_COLOUR

    def asked_again() -> bool:
        model.index(0, 0).data()  # what a view does when the retry repaints the rows
        return model.index(0, 0).data() == "x"

    qtbot.waitUntil(asked_again)
    assert len(attempts) == 2
    worker.shutdown()
