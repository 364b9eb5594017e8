"""The app's one write path: every write publishes one `Changes`, views refresh themselves from it, undo runs in
the background and moves the stack only after the commit, and another process's write arrives the same way."""

from __future__ import annotations

from pathlib import Path

from stratagate.memory import open as open_memory
from stratagate_gui.changes import Changes, Origin
from stratagate_gui.curation.actions import Action
from tests.conftest import REFERENCE_NAMESPACE


def _curate(window, action: Action, ids: list[str]) -> None:
    window.curation.controller.preview = False
    window.curation.controller.request(action, ids)
    assert window.wait_idle()


def test_a_curation_write_publishes_what_changed_and_who_caused_it(opened_window, qtbot):
    published: list[Changes] = []
    opened_window.writes.changes.connect(published.append)
    _curate(opened_window, Action.FORGET, ["evt_85", "evt_86"])
    (change,) = published
    assert change.origin is Origin.ACTION and change.label == "Forget 2 events"
    assert change.events == {"evt_85", "evt_86"} and change.journal and not change.blocks
    opened_window.history.undo()
    assert opened_window.wait_idle()
    assert published[-1].origin is Origin.UNDO and published[-1].label == "Undo Forget 2 events"


def test_a_corrected_card_appears_in_the_curation_list_without_a_reload(opened_window, qtbot):
    curation = opened_window.curation
    opened_window.show_view(curation.curation)  # its list is read when shown
    qtbot.waitUntil(lambda: curation.curation.model.total == 12)
    curation.controller.preview = False
    card = {"id": "evt_corrected", "title": "Kickoff (corrected)", "summary": "It was on Tuesday."}
    curation.controller.request_correction(["evt_51"], card)
    assert opened_window.wait_idle()
    qtbot.waitUntil(lambda: curation.curation.model.total == 13)
    assert curation.curation.count_label.text() == "13 events"
    assert curation.curation.model.row_of("evt_corrected") >= 0
    qtbot.waitUntil(lambda: opened_window.events.model.total == 13)


def test_undo_runs_in_the_background_and_edit_undo_waits_for_it(opened_window, qtbot):
    _curate(opened_window, Action.PIN, ["evt_51"])
    history, window = opened_window.history, opened_window
    assert window.undo_action.isEnabled() and window.undo_action.text() == "&Undo Pin evt_51"
    window.undo_action.trigger()
    # Nothing was written yet on the UI thread: the index has not moved and Undo/Redo are disabled meanwhile.
    assert history.busy and history.index() == 1
    assert not window.undo_action.isEnabled() and not window.redo_action.isEnabled()
    window.undo_action.trigger()  # ignored while the first undo is in flight
    assert window.wait_idle()
    assert history.index() == 0 and not history.busy
    assert window.redo_action.isEnabled() and window.redo_action.text() == "&Redo Pin evt_51"
    memory = window.memory
    assert not window.worker.call(lambda: memory.get_event("evt_51").weight.pinned)


def test_a_write_by_another_process_arrives_through_the_same_signal(opened_window, qtbot, reference_db_copy: Path):
    events = opened_window.events
    events.select_event("evt_85")
    assert opened_window.wait_idle()
    assert "pinned" not in events.card.toPlainText().split("\n")[1]
    other = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    other.pin_event("evt_85")
    other.close()
    published: list[Changes] = []
    opened_window.writes.changes.connect(published.append)
    opened_window.writes.external_change()
    assert opened_window.wait_idle()
    assert [(change.origin, change.reloaded) for change in published] == [(Origin.EXTERNAL, True)]
    qtbot.waitUntil(lambda: "weight 1.000 · pinned" in events.card.toPlainText())
    assert opened_window._revision_label.text() == f"revision {opened_window.memory.revision}"


def test_reload_keeps_the_undo_history(opened_window):
    _curate(opened_window, Action.PIN, ["evt_51"])
    opened_window.reload()
    assert opened_window.wait_idle()
    assert opened_window.history.count() == 1 and opened_window.undo_action.isEnabled()
    opened_window.history.undo()
    assert opened_window.wait_idle()
    memory = opened_window.memory
    assert not opened_window.worker.call(lambda: memory.get_event("evt_51").weight.pinned)


def test_after_another_process_wrote_a_reload_keeps_what_can_still_be_undone(opened_window, reference_db_copy):
    messages: list[str] = []
    opened_window.writes.message.connect(messages.append)
    _curate(opened_window, Action.PIN, ["evt_51"])
    other = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    other.pin_event("evt_52")
    other.close()
    opened_window.reload()
    assert opened_window.wait_idle()
    assert opened_window.history.count() == 1
    assert messages[-1] == "Another process wrote to this memory: undo history kept (1 step(s))"
    opened_window.history.undo()
    assert opened_window.wait_idle()
    memory = opened_window.memory
    pins = opened_window.worker.call(lambda: [memory.get_event(i).weight.pinned for i in ("evt_51", "evt_52")])
    assert pins == [False, True]  # the other process's pin is kept


def test_switching_namespace_and_back_keeps_each_namespaces_history(opened_window, reference_db_copy):
    other = open_memory(reference_db_copy, "project:other")
    other.close()
    _curate(opened_window, Action.FORGET, ["evt_85"])
    opened_window.open_location(str(reference_db_copy), "project:other")
    assert opened_window.wait_idle()
    assert opened_window.history.count() == 0 and not opened_window.undo_action.isEnabled()
    opened_window.open_location(str(reference_db_copy), REFERENCE_NAMESPACE)
    assert opened_window.wait_idle()
    assert opened_window.history.undo_text() == "Forget evt_85"


def test_the_curator_name_is_kept_in_the_settings_and_written_in_the_journal(make_window, settings, reference_db_copy):
    from stratagate import journal

    window = make_window()
    window.curation.set_curator_name("Ada Lovelace")
    assert settings.value("curation/curatorName") == "Ada Lovelace"
    window.close()
    window = make_window()  # a new session reads it back
    assert window.curation.controller.actor == "Ada Lovelace"
    window.open_location(str(reference_db_copy), REFERENCE_NAMESPACE)
    assert window.wait_idle()
    _curate(window, Action.PIN, ["evt_51"])
    memory = window.memory
    entries = window.worker.call(lambda: journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE))
    assert [entry.actor for entry in entries] == ["Ada Lovelace"]
    assert any(action.text() == "Curator &name…" for action in window.edit_menu.actions())
