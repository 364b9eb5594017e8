"""Ctrl+K: one search box across events, elements, facts and raw messages; Enter jumps to the item's view."""

from __future__ import annotations

from PySide6.QtCore import Qt


def _groups(box) -> list[str]:
    return [box.results.topLevelItem(n).text(0).split(" (")[0] for n in range(box.results.topLevelItemCount())]


def test_ctrl_k_searches_every_kind_and_enter_jumps_to_the_first_hit(opened_window, qtbot):
    window = opened_window
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyRelease(window, Qt.Key.Key_Control)
    box = window.search_box
    assert box.isVisible()
    box.query.setText("PostgreSQL")
    qtbot.waitUntil(lambda: bool(box.found))
    groups = _groups(box)
    assert groups[0] == "Events" and "Raw messages" in groups
    first = box.found[0]
    assert first.group == "Events"
    qtbot.keyClick(box.query, Qt.Key.Key_Return)
    assert not box.isVisible()
    assert window.tabs.currentWidget() is window.events
    qtbot.waitUntil(lambda: window.events.selected_ids() == [first.identifier])


def test_the_search_box_finds_elements_and_their_facts(opened_window, qtbot):
    box = opened_window.search_box
    box.open_box()
    box.query.setText("Alice")
    qtbot.waitUntil(lambda: bool(box.found))
    assert {"Elements", "Facts"} <= set(_groups(box))
    element = next(hit for hit in box.found if hit.group == "Elements")
    item = box.results.findItems(element.text, Qt.MatchFlag.MatchRecursive | Qt.MatchFlag.MatchExactly)[0]
    box.results.itemActivated.emit(item, 0)
    assert opened_window.tabs.currentWidget() is opened_window.elements
    qtbot.waitUntil(lambda: opened_window.elements.element is not None and opened_window.elements.element.id == element.identifier)
