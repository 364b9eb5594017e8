"""What each view of the app shows for the reference memory (tests/fixtures/reference-v5-basic.sqlite)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication

from stratagate_gui.views.temporal import parse_span
from stratagate_gui.widgets.markdown_browser import internal_link

NAMESPACE = "project:atlas"


def rows(model) -> list[list[str]]:
    return [[model.index(r, c).data() for c in range(model.columnCount())] for r in range(model.rowCount())]


def wait_rows(qtbot, window, model) -> list[list[str]]:
    model.index(0, 0).data()
    qtbot.waitUntil(lambda: model.built_row(0) is not None)
    window.wait_idle()
    return rows(model)


# Main window --------------------------------------------------------------------------------------------


def test_forensic_open_shows_badge_hash_revision_and_turn(make_window, reference_db_copy: Path):
    before = hashlib.sha256(reference_db_copy.read_bytes()).hexdigest()
    window = make_window()
    window.open_location(str(reference_db_copy), read_only=True)
    assert window.wait_idle()
    assert window.badge.property("mode") == "readOnly"
    assert window.badge.text().startswith("READ-ONLY · FORENSIC")
    assert f"sha256 {before[:12]}" in window.badge.text()
    assert before in window.badge.toolTip()
    assert window.namespace_picker.currentText() == NAMESPACE
    assert window._turn_label.text() == "turn 40"
    assert window._revision_label.text() == f"revision {window.memory.revision}"
    assert not window.timeline.lift_button.isEnabled()
    window.close()
    assert hashlib.sha256(reference_db_copy.read_bytes()).hexdigest() == before


def test_recent_files_remember_opened_locations(opened_window, reference_db_copy: Path):
    assert opened_window.recent_locations()[0] == str(reference_db_copy)
    assert [action.text() for action in opened_window.recent_menu.actions()] == [str(reference_db_copy)]


def test_extension_points_for_other_views(opened_window, qtbot):
    from PySide6.QtWidgets import QLabel

    index = opened_window.add_view("Extra", QLabel("plug-in"))
    assert opened_window.tabs.tabText(index) == "Extra"
    assert opened_window.undo_action in opened_window.edit_menu.actions()
    assert opened_window.worker is not None and opened_window.memory.namespace == NAMESPACE
    with qtbot.waitSignal(opened_window.memory_changed) as blocker:
        opened_window.reload()
    assert blocker.args[0] is opened_window.memory


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"just some notes, not a database\n" * 20, "not"),
        (b"SQLite format 3\x00" + b"\xff" * 4000, ""),
    ],
    ids=["text-file", "corrupt-sqlite"],
)
def test_bad_files_get_a_dialog_naming_the_file(make_window, tmp_path: Path, monkeypatch, content, reason):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(content)
    shown: list[str] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: shown.append(text)
    window.open_location(str(bad))
    assert window.wait_idle()
    assert len(shown) == 1 and str(bad) in shown[0]
    assert reason in shown[0]
    assert window.memory is None and window.isVisible()


def test_unknown_newer_schema_is_refused_and_the_app_stays_usable(make_window, reference_db_copy, monkeypatch):
    connection = sqlite3.connect(reference_db_copy)
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    shown: list[str] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: shown.append(text)
    window.open_location(str(reference_db_copy))
    assert window.wait_idle()
    assert len(shown) == 1 and str(reference_db_copy) in shown[0] and "99" in shown[0]
    # The app stays usable: a good file opens afterwards.
    good = reference_db_copy.with_name("good.sqlite")
    shutil.copyfile(Path(__file__).parents[1] / "fixtures" / "reference-v5-basic.sqlite", good)
    window.open_location(str(good), read_only=True)
    assert window.wait_idle() and window.memory is not None


# Timeline -----------------------------------------------------------------------------------------------


def test_timeline_colours_blocks_by_their_current_level(opened_window):
    bars = opened_window.timeline.plot.bars
    assert [(block, start, end, level) for block, start, end, _lane, level in bars] == [
        ("blk_25", 1, 12, 3),
        ("blk_50", 13, 24, 5),
        ("blk_82", 25, 36, 5),
    ]


def test_level_toggles_switch_every_block_rendering(opened_window):
    timeline = opened_window.timeline
    timeline.set_rendering_level(0)
    text = timeline.content.toPlainText()
    assert "Tags: atlas, sqlite, demo, bob" in text
    assert text.count("L0 title and tags") == 3
    timeline.set_rendering_level(2)
    assert "Atlas is an internal search service for our support team." in timeline.content.toPlainText()
    timeline.set_rendering_level(5)
    raw = timeline.content.toPlainText()
    assert raw.count("L5 raw transcript") == 3
    assert "Tool call web_search" in raw and '"query": "sqlite vs postgres for a small service"' in raw


def test_user_lift_is_recorded_as_user(opened_window, qtbot):
    timeline = opened_window.timeline
    timeline.select_block("blk_50")
    timeline.lift_target.setCurrentIndex(2)
    revision = opened_window.memory.revision
    timeline.lift_button.click()
    assert opened_window.wait_idle()
    block = next(b for b in opened_window.memory.list_blocks() if b.id == "blk_50")
    assert block.last_lifted_by == "user" and block.pointer_anchor_level == 2
    assert opened_window.memory.revision == revision + 1
    assert ("blk_50", 13, 24, 1, 2) in [(b, s, e, lane + 1, lvl) for b, s, e, lane, lvl in timeline.plot.bars]
    assert opened_window._revision_label.text() == f"revision {revision + 1}"


# Events -------------------------------------------------------------------------------------------------


def test_event_list_and_filters(opened_window, qtbot):
    events = opened_window.events
    table = wait_rows(qtbot, opened_window, events.model)
    assert len(table) == 12 and events.count_label.text() == "12 events"
    assert table[0][:4] == ["Atlas project kickoff", "meeting", "active", "routine"]
    events.filters.status.setCurrentText("superseded")
    qtbot.waitUntil(lambda: events.model.total == 2)
    assert [events.model.id_at(row) for row in range(2)] == ["evt_53", "evt_54"]
    events.filters.status.setCurrentText("any")
    events.filters.participant.setText("Carol")
    qtbot.waitUntil(lambda: events.model.total == 1)
    assert events.model.id_at(0) == "evt_87"
    events.filters.participant.clear()
    events.filters.text.setText("lisbon")
    qtbot.waitUntil(lambda: events.model.total == 1 and events.model.id_at(0) == "evt_86")
    events.filters.text.clear()
    events.filters.event_type.setText("demo")
    events.filters.criticality.setCurrentText("routine")
    qtbot.waitUntil(lambda: events.model.total == 2)
    assert [events.model.id_at(row) for row in range(2)] == ["evt_54", "evt_84"]


def test_type_and_participant_boxes_suggest_the_memorys_values_once_focused(opened_window, qtbot):
    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    suggested = events.filters.suggestions
    assert suggested["eventType"].stringList() == []  # not listed before a box is used
    # An offscreen window is never active, so setFocus() sends no focus event: send the one a click would.
    QApplication.sendEvent(events.filters.event_type, QFocusEvent(QEvent.Type.FocusIn, Qt.FocusReason.MouseFocusReason))
    qtbot.waitUntil(lambda: suggested["eventType"].stringList() != [])
    assert {"demo", "meeting"} <= set(suggested["eventType"].stringList())
    assert "Carol" in suggested["participant"].stringList()
    completer = events.filters.event_type.completer()
    completer.setCompletionPrefix("mee")
    assert completer.currentCompletion() == "meeting"


def test_event_card_shows_sources_supersession_and_time_lanes(opened_window, qtbot):
    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    assert events.select_event("evt_83")
    opened_window.wait_idle()
    card = events.card.toPlainText()
    for expected in ("Switched Atlas storage to PostgreSQL", "Supersedes: evt_53", "Block: blk_50",
                     "Messages: msg_32, msg_33", "Participants: Alice", "mentions 2"):
        assert expected in card
    events.select_event("evt_86")
    opened_window.wait_idle()
    month = parse_span("2026-03")
    assert events.temporal_plot.happened_spans == [("evt_86", month.start, month.end)]
    mentioned = datetime(2026, 3, 12, 1, tzinfo=UTC).timestamp()
    assert events.temporal_plot.mentioned_points == [("evt_86", mentioned)]


def test_card_links_jump_to_blocks_messages_and_events(opened_window, qtbot):
    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    events.select_event("evt_83")
    opened_window.wait_idle()
    events.card.anchorClicked.emit(QUrl(internal_link("block", "blk_50")))
    assert opened_window.tabs.currentWidget() is opened_window.timeline
    assert opened_window.timeline.selected_block == "blk_50"
    events.card.anchorClicked.emit(QUrl(internal_link("message", "msg_8")))
    opened_window.wait_idle()  # the message's block is looked up on the worker
    assert opened_window.timeline.selected_block == "blk_25" and opened_window.timeline.rendering_level == 5
    events.card.anchorClicked.emit(QUrl(internal_link("event", "evt_53")))
    assert opened_window.tabs.currentWidget() is events
    assert events.selected_ids() == ["evt_53"]
    events.card.anchorClicked.emit(QUrl("javascript:alert(1)"))
    assert opened_window.tabs.currentWidget() is events


# Elements -----------------------------------------------------------------------------------------------


def test_element_history_and_as_of_state(opened_window, qtbot):
    elements = opened_window.elements
    qtbot.waitUntil(lambda: elements.element is not None)
    elements.select_element("elem_2")
    opened_window.wait_idle()
    assert elements.facts.rowCount() == 8
    storage = [elements.facts.item(r, 2).text() for r in range(8) if elements.facts.item(r, 0).text() == "storage"]
    assert storage == ["SQLite", "PostgreSQL"]
    lanes = {fact: (key, lane) for fact, key, lane, _start, _end in elements.validity.intervals}
    assert len(lanes) == 8
    # Superseded and superseding states share a lane; overlapping set members get their own.
    assert lanes["fact_10"][1] == lanes["fact_19"][1] and lanes["fact_11"][1] == lanes["fact_22"][1]
    assert lanes["fact_3"][0] == lanes["fact_25"][0] == "members" and lanes["fact_3"][1] != lanes["fact_25"][1]
    at = int(datetime(2026, 3, 5, tzinfo=UTC).timestamp() * 1000)
    elements.show_as_of(at)
    opened_window.wait_idle()
    state = elements.state_view.toPlainText()
    assert "storage: SQLite" in state and "storage: PostgreSQL" not in state.split("Change from")[0]
    elements.show_as_of(elements.edges_ms[1])
    opened_window.wait_idle()
    state = elements.state_view.toPlainText()
    assert "storage: PostgreSQL" in state and "members: Alice, Bob, Carol" in state
    assert "+ members: Alice, Bob, Carol" in state and "- members: Alice, Bob" in state


# Decay --------------------------------------------------------------------------------------------------


def test_decay_curves_show_floor_cap_pin_and_forget(opened_window):
    decay = opened_window.decay
    decay.show_items("event", ["evt_52", "evt_53", "evt_61"])
    opened_window.wait_idle()
    curves = {curve.id: curve for curve in decay.curves}
    assert decay.current_turn == 40
    assert [text for _turn, _weight, text in curves["evt_52"].markers] == ["pinned"]
    assert curves["evt_52"].floor == 0.3
    assert curves["evt_53"].cap == 0.1 and max(curves["evt_53"].projected[1]) <= 0.1
    assert curves["evt_61"].markers == [(40, 0.0, "forgotten")]
    past_turns, past_weights = curves["evt_53"].past
    assert past_turns[0] == 24 and past_turns[-1] == 40
    assert past_weights[-1] == pytest.approx(opened_window.memory.event_weight("evt_53"))


def test_what_if_lambda_changes_the_projection(opened_window):
    decay = opened_window.decay
    decay.show_items("event", ["evt_85"])
    opened_window.wait_idle()
    baseline = decay.curves[0].projected[1][-1]
    decay.event_lambda.setValue(0.05)
    opened_window.wait_idle()
    slower = decay.curves[0].projected[1][-1]
    assert slower > baseline
    decay.show_items("block", ["blk_82"])
    opened_window.wait_idle()
    assert decay.curves[0].levels is not None and decay.curves[0].past[1][-1] == 1.0


def test_thread_picker_filters_the_timeline(make_window, tmp_path: Path):
    import stratagate

    path = tmp_path / "threads.sqlite"
    memory = stratagate.open(str(path), "chat", block_turn_size=2)
    for thread, turns in (("alpha", 4), ("beta", 2)):
        for turn in range(turns):
            memory.append_turn(f"{thread} question {turn}", f"{thread} answer {turn}", thread_id=thread)
    memory.close()
    window = make_window()
    window.open_location(str(path))
    assert window.wait_idle()
    picker = window.thread_picker
    assert [picker.itemText(i) for i in range(picker.count())] == ["All threads", "alpha", "beta"]
    assert len(window.timeline.plot.bars) == 3
    assert {lane for *_block, lane, _level in window.timeline.plot.bars} == {0, 1}
    picker.setCurrentIndex(2)
    picker.activated.emit(2)
    assert window.wait_idle()
    assert window.thread_id == "beta"
    assert len(window.timeline.plot.bars) == 1
    assert "beta question 0" in window.timeline.content.toPlainText()


def test_unreadable_dates_are_flagged_under_the_time_lanes(make_window, reference_db_copy: Path):
    import stratagate

    memory = stratagate.open(str(reference_db_copy), NAMESPACE)
    added = memory.add_event(
        "Offsite sometime after the launch", source_block_id="blk_82",
        temporal={"mentionedAt": "2026-03-20T09:00:00+08:00", "happenedStart": "after the launch"},
    )
    memory.close()
    window = make_window()
    window.open_location(str(reference_db_copy), NAMESPACE)
    assert window.wait_idle()
    events = window.events
    assert events.select_event(added.id)
    window.wait_idle()
    assert events.temporal_plot.happened_spans == []
    assert len(events.temporal_plot.mentioned_points) == 1
    assert events.unreadable_label.text() == (
        f"⚠ Not plotted: {added.id}: happened start 'after the launch' is not a date"
    )
    assert "Happened: after the launch" in events.card.toPlainText()


def test_refresh_after_a_write_keeps_the_current_event_and_shows_its_new_state(opened_window, qtbot):
    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    events.select_event("evt_85")
    opened_window.wait_idle()
    assert "pinned" not in events.card.toPlainText().split("\n")[1]
    memory = opened_window.memory
    opened_window.worker.call(lambda: memory.pin_event("evt_85"))
    events.refresh()
    assert opened_window.wait_idle()
    assert events.selected_ids() == ["evt_85"]
    assert "weight 1.000 · pinned" in events.card.toPlainText()
    row = events.model.row_of("evt_85")
    events.model.index(row, 0).data()
    opened_window.wait_idle()
    assert events.model.index(row, 4).data() == "1.000"


def test_the_element_list_holds_ids_and_reads_the_picked_element(opened_window, qtbot):
    elements = opened_window.elements
    qtbot.waitUntil(lambda: elements.element is not None)
    memory = opened_window.memory
    assert elements.element_ids == opened_window.worker.call(memory.element_ids)
    assert not hasattr(elements, "elements")
    elements.select_element(elements.element_ids[-1])
    opened_window.wait_idle()
    assert elements.element.id == elements.element_ids[-1]
    assert elements.facts.rowCount() == len(elements.element.facts)


def test_the_timeline_draws_every_block_but_reads_only_those_around_the_selection(make_window, tmp_path: Path):
    import stratagate
    from stratagate_gui.views.timeline import RENDERED_AROUND_SELECTION

    path = tmp_path / "long.sqlite"
    with stratagate.open(path, "long", block_turn_size=1) as memory:
        for turn in range(120):
            memory.append_turn(f"question {turn}", f"answer {turn}")
        sealed = len(memory.block_spans())
    assert sealed > 2 * RENDERED_AROUND_SELECTION + 1
    window = make_window()
    window.open_location(str(path))
    assert window.wait_idle()
    timeline = window.timeline
    assert len(timeline.plot.bars) == sealed and timeline.list_model.rowCount() == sealed
    assert len(timeline.data.blocks) == RENDERED_AROUND_SELECTION + 1  # the last block and the 40 before it
    first = timeline.plot.bars[0][0]
    timeline.select_block(first)
    assert window.wait_idle()
    assert first in timeline.data.blocks and "question 0" in timeline.content.toPlainText()


def test_the_window_fits_a_1280_pixel_screen(opened_window):
    """Every view's controls and the live-changes dock fit in the window's default width, so nothing is cut
    off on a laptop screen (the timeline's level bar once forced the window to 1,564 px)."""
    assert opened_window.minimumSizeHint().width() <= 1280
