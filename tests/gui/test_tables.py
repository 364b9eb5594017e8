"""Tables people can work with: header sorting on the lazy event tables, and the pinned column and facet."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.gui.test_app_views import rows, wait_rows


def _titles(window, model) -> list[str]:
    return [row[0] for row in wait_rows_all(window, model)]


def wait_rows_all(window, model) -> list[list[str]]:
    for row in range(model.rowCount()):
        model.index(row, 0).data()
    window.wait_idle()
    return rows(model)


def test_the_events_table_sorts_by_any_column_on_a_header_click(opened_window, qtbot):
    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    section_order = [events.model.id_at(row) for row in range(events.model.total)]
    header = events.table.horizontalHeader()
    header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)  # what a click on "Title" does
    opened_window.wait_idle()
    titles = _titles(opened_window, events.model)
    assert titles == sorted(titles, key=str.casefold) and len(titles) == 12
    header.setSortIndicator(4, Qt.SortOrder.DescendingOrder)  # Weight, as numbers
    opened_window.wait_idle()
    weights = [float(row[4]) for row in wait_rows_all(opened_window, events.model)]
    assert weights == sorted(weights, reverse=True)
    header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # the third click: the memory's own order
    opened_window.wait_idle()
    assert [events.model.id_at(row) for row in range(events.model.total)] == section_order


def test_pinned_is_a_column_and_a_filter_in_events_and_curation(opened_window, qtbot):
    memory = opened_window.memory
    opened_window.worker.call(lambda: memory.pin_event("evt_85"))
    opened_window.writes.external_change()
    opened_window.wait_idle()
    events, curation = opened_window.events, opened_window.curation.curation
    events.filters.pinned.setCurrentText("pinned")
    qtbot.waitUntil(lambda: events.model.total == 2)  # the fixture's evt_52 is pinned already
    assert [events.model.id_at(row) for row in range(2)] == ["evt_52", "evt_85"]
    assert events.model.headerData(8, Qt.Orientation.Horizontal) == "Pinned"
    assert [row[8] for row in wait_rows_all(opened_window, events.model)] == ["pinned", "pinned"]
    opened_window.show_view(curation)
    curation.pinned_filter.setCurrentText("not pinned")
    qtbot.waitUntil(lambda: curation.model.total == 10)
    assert {"evt_52", "evt_85"}.isdisjoint(curation.model.id_at(row) for row in range(10))


def _menu_action(menu, text: str):
    return next(action for action in menu.actions() if action.text() == text)


def test_right_click_copies_ids_and_rows_and_opens_the_related_view(opened_window, qtbot):
    import json

    from PySide6.QtGui import QGuiApplication

    from stratagate_gui.views.events import EVENT_COLUMNS
    from stratagate_gui.widgets.row_menu import row_menu

    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    events.select_event("evt_85")
    opened_window.wait_idle()
    menu = row_menu(events.table, events.model, EVENT_COLUMNS, events.row_actions)
    _menu_action(menu, "Copy id").trigger()
    assert QGuiApplication.clipboard().text() == "evt_85"
    _menu_action(menu, "Copy row as JSON").trigger()
    (record,) = json.loads(QGuiApplication.clipboard().text())
    assert record["Id"] == "evt_85" and record["Status"] == "active" and record["Pinned"] == ""
    _menu_action(menu, "Show in Curation").trigger()
    curation = opened_window.curation.curation
    qtbot.waitUntil(lambda: curation.selected_ids() == ["evt_85"])
    assert opened_window.tabs.currentWidget() is curation

    opened_window.curation.controller.preview = False
    _menu_action(menu, "Pin or unpin").trigger()
    assert opened_window.wait_idle()
    memory = opened_window.memory
    assert opened_window.worker.call(lambda: memory.get_event("evt_85").weight.pinned)
    curation_menu = row_menu(curation.table, curation.model, EVENT_COLUMNS, curation.row_actions)
    _menu_action(curation_menu, "Open in Events").trigger()
    assert opened_window.tabs.currentWidget() is events and events.selected_ids() == ["evt_85"]


def test_the_triage_keys_work_in_the_events_list_too(opened_window, qtbot):
    from stratagate_gui.shortcuts import select_row

    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    opened_window.curation.controller.preview = False
    opened_window.show_view(events)
    qtbot.waitExposed(events)
    events.table.setFocus()
    select_row(events.table, 0)
    qtbot.keyClick(events.table, Qt.Key.Key_J)
    assert events.selected_ids() == ["evt_52"]
    qtbot.keyClick(events.table, Qt.Key.Key_K)
    qtbot.keyClick(events.table, Qt.Key.Key_P)
    assert opened_window.wait_idle()
    memory = opened_window.memory
    assert opened_window.worker.call(lambda: memory.get_event("evt_51").weight.pinned)
    qtbot.keyClick(events.table, Qt.Key.Key_F)
    assert opened_window.wait_idle()
    assert opened_window.worker.call(lambda: memory.get_event("evt_51").status) == "forgotten"
    assert events.selected_ids() == ["evt_51"]  # the row stays selected through the writes


def test_the_shortcut_sheet_names_the_tabs_and_shows_every_row_without_scrolling(make_window, qtbot):
    from stratagate_gui.shortcuts import ShortcutsDialog

    window = make_window()
    tabs = {window.tabs.tabText(index) for index in range(window.tabs.count())}
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    places = {dialog.table.item(row, 2).text() for row in range(dialog.table.rowCount())}
    named = {word.strip() for place in places for word in place.replace(" lists", "").replace(" list", "")
             .replace(" tab", "").replace(" and ", ",").split(",")}
    assert named - {"Everywhere"} <= tabs
    assert not dialog.table.verticalScrollBar().isVisible() and not dialog.table.horizontalScrollBar().isVisible()
    assert not window.timeline.lift_button.isEnabled()  # nothing open: nothing to lift


def _reveal(widget) -> None:
    """Make the tab and stacked page holding `widget` current, so its header can be clicked."""
    from PySide6.QtWidgets import QStackedWidget

    while widget.parentWidget() is not None:
        parent = widget.parentWidget()
        if isinstance(parent, QStackedWidget):
            parent.setCurrentWidget(widget)
        widget = parent


def _click_header(qtbot, table, column: int) -> None:
    from PySide6.QtCore import QPoint

    header = table.horizontalHeader()
    table.scrollTo(table.model().index(0, column))
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))


def _column(window, table, column: int) -> list[str]:
    from stratagate_gui.models.lazy_table import LazyIdTableModel

    model = table.model()
    if isinstance(model, LazyIdTableModel):
        window.wait_idle()  # a lazy model lists its ids again, sorted, on the worker
        return [row[column] for row in wait_rows_all(window, model)]
    return [model.index(row, column).data() for row in range(model.rowCount())]


def test_every_table_of_the_main_window_sorts_when_its_header_is_clicked(opened_window, qtbot):
    from PySide6.QtWidgets import QTableView

    from stratagate_gui.widgets.tables import sort_key

    window = opened_window
    window.resize(1400, 900)
    window.show()
    tables = window.findChildren(QTableView)
    assert len(tables) >= 10
    changed = set()
    for table in tables:
        name = table.accessibleName()
        assert table.isSortingEnabled(), name
        _reveal(table)
        window.wait_idle()  # a view that lists when shown (Curation) has read its rows
        if table.model().rowCount() < 2:
            continue
        for column in range(table.model().columnCount()):
            before = [str(value) for value in _column(window, table, column)]
            _click_header(qtbot, table, column)
            after = [str(value) for value in _column(window, table, column)]
            assert after == sorted(before, key=sort_key), (name, column)
            changed |= {name} if after != before else set()
    # Tables with rows in the reference memory: the order really changed on a click.
    assert {"Events", "Events to curate", "Usage receipts", "Model calls", "Fact versions"} <= changed


def test_the_fact_status_facet_hides_the_other_facts(opened_window, qtbot):
    elements = opened_window.elements
    elements.element_list.setCurrentRow(0)
    opened_window.wait_idle()
    facts, facet = elements.facts, elements.status_filter
    statuses = [facts.item(row, 3).text() for row in range(facts.rowCount())]
    assert [facet.itemText(n) for n in range(1, facet.count())] == sorted(set(statuses))
    chosen = statuses[0]
    facet.setCurrentText(chosen)
    assert [not facts.isRowHidden(row) for row in range(facts.rowCount())] == [s == chosen for s in statuses]


def test_the_shortcut_sheet_sorts_by_any_column_too(make_window, qtbot):
    from stratagate_gui.shortcuts import SHORTCUTS, ShortcutsDialog
    from stratagate_gui.widgets.tables import sort_key

    dialog = ShortcutsDialog(make_window())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    table = dialog.table
    for column in range(table.columnCount()):
        before = [table.item(row, column).text() for row in range(table.rowCount())]
        _click_header(qtbot, table, column)
        assert [table.item(row, column).text() for row in range(table.rowCount())] == sorted(before, key=sort_key)
    assert table.rowCount() == len(SHORTCUTS)


def test_the_curation_list_filters_by_criticality_like_the_events_list(opened_window, qtbot):
    from stratagate_gui.views.events import EVENT_COLUMNS

    curation = opened_window.curation.curation
    opened_window.show_view(curation)  # the curation tab lists its events when shown
    qtbot.waitUntil(lambda: curation.model.total == 12)
    everything = wait_rows_all(opened_window, curation.model)
    criticality = EVENT_COLUMNS.index("Criticality")
    chosen = next(row[criticality] for row in everything if row[criticality] != "routine")
    expected = sorted(row[-1] for row in everything if row[criticality] == chosen)
    curation.criticality_filter.setCurrentText(chosen)
    qtbot.waitUntil(lambda: curation.model.total == len(expected))
    assert sorted(row[-1] for row in wait_rows_all(opened_window, curation.model)) == expected
    hidden = next(row[-1] for row in everything if row[criticality] != chosen)
    curation.select_event(hidden)  # a jump to an event the facet hides clears the facets
    qtbot.waitUntil(lambda: curation.selected_ids() == [hidden])
    assert curation.criticality_filter.currentIndex() == 0
