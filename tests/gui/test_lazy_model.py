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
