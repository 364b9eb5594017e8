"""The preview, conflict and supersede dialogs show what an action changes and return the user's choice."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QDialog

from stratagate.errors import StorageConflictError
from stratagate.model import EventWeight
from stratagate_gui.curation.actions import Action, EventState, Step
from stratagate_gui.curation.dialogs import PreviewDialog
from stratagate_gui.curation.view import SupersedeDialog
from stratagate_gui.widgets.conflict_dialog import ConflictChoice, ConflictDialog

ACTIVE = EventState("active", False, None, None, EventWeight(mention_count=1, last_adopted_turn=30))


def _cells(table) -> list[list[str]]:
    return [
        [table.item(row, column).text() for column in range(table.columnCount())]
        for row in range(table.rowCount())
    ]


def test_preview_lists_each_event_before_and_after(qtbot):
    steps = [
        Step(Action.FORGET, "evt_1", "Kickoff", ACTIVE, replace(ACTIVE, status="forgotten")),
        Step(
            Action.FORGET,
            "evt_2",
            "Demo",
            replace(ACTIVE, pinned=True),
            replace(ACTIVE, pinned=True, status="forgotten"),
        ),
    ]
    dialog = PreviewDialog("Forget 2 events", steps, 40, None)
    qtbot.addWidget(dialog)
    assert _cells(dialog.table) == [
        ["evt_1", "Kickoff", "active → forgotten", "no", "0.223 → 0.000", "—"],
        ["evt_2", "Demo", "active → forgotten", "yes", "1.000 → 0.000", "—"],
    ]
    assert dialog.apply_button.text() == "Forget 2 events"
    dialog.apply_button.click()
    assert dialog.result() == QDialog.DialogCode.Accepted


def test_conflict_dialog_shows_what_the_other_writer_changed_and_returns_the_choice(qtbot):
    error = StorageConflictError("project:atlas", 103, 104)
    expected = [("evt_1", ACTIVE), ("evt_2", ACTIVE)]
    current = {"evt_1": replace(ACTIVE, pinned=True), "evt_2": ACTIVE}
    dialog = ConflictDialog("Forget 2 events", error, expected, current, None)
    qtbot.addWidget(dialog)
    assert _cells(dialog.table) == [
        ["evt_1", "active", "active, pinned", "changed"],
        ["evt_2", "active", "active", "unchanged"],
    ]
    dialog.retry_button.click()
    assert dialog.choice is ConflictChoice.RETRY
    other = ConflictDialog("Forget 2 events", error, expected, current, None)
    qtbot.addWidget(other)
    other.reload_button.click()
    assert other.choice is ConflictChoice.RELOAD


def test_supersede_dialog_needs_a_replacement_or_a_complete_card(qtbot):
    dialog = SupersedeDialog(["evt_51"], None)
    qtbot.addWidget(dialog)
    dialog.ok_button.click()
    assert dialog.problem.text() == "Enter the id of the replacing event."
    dialog.existing_id.setText(" evt_87 ")
    dialog.ok_button.click()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.replacement_id() == "evt_87" and dialog.card() is None

    card_dialog = SupersedeDialog(["evt_51", "evt_55"], None)
    qtbot.addWidget(card_dialog)
    card_dialog.by_card.setChecked(True)
    card_dialog.title.setText("Kickoff (corrected)")
    card_dialog.ok_button.click()
    assert card_dialog.problem.text() == "A corrected card needs a title and a summary."
    card_dialog.summary.setText("It was on Tuesday.")
    card_dialog.criticality.setCurrentText("identity")
    card_dialog.ok_button.click()
    card = card_dialog.card()
    assert card["id"].startswith("evt_") and card["criticality"] == "identity"
    assert (card["title"], card["summary"]) == ("Kickoff (corrected)", "It was on Tuesday.")


class _Lookups:
    """A database answering the dialog's id lookups when the test says so, as the worker does later."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        self.waiting: list[tuple[str, object]] = []

    def __call__(self, fragment, answer):
        self.waiting.append((fragment, answer))

    def answer_all(self):
        waiting, self.waiting = self.waiting, []
        for fragment, answer in waiting:
            exact = [fragment] if fragment in self.ids else []
            answer(exact + [i for i in self.ids if fragment.casefold() in i.casefold() and i != fragment])


def test_supersede_dialog_searches_the_ids_as_the_user_pauses_and_refuses_an_unknown_one(qtbot):
    lookups = _Lookups(["evt_51", "evt_52", "evt_87"])
    dialog = SupersedeDialog(["evt_51"], None, lookup=lookups)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.existing_id, "87")
    qtbot.waitUntil(lambda: bool(lookups.waiting))  # one lookup once typing pauses, not one per key
    assert [fragment for fragment, _answer in lookups.waiting] == ["87"]
    lookups.answer_all()
    assert dialog.suggestions.stringList() == ["evt_87"]

    dialog.existing_id.setText("blk_bogus:evt:99")
    dialog.ok_button.click()
    assert dialog.problem.text() == "Looking for blk_bogus:evt:99…"
    lookups.answer_all()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.text() == "No other event blk_bogus:evt:99 in this memory: pick one from the list."

    dialog.existing_id.setText("evt_51")
    dialog.ok_button.click()
    assert dialog.problem.text() == "evt_51 is one of the events being superseded: pick another."

    dialog.existing_id.setText("evt_87")
    dialog.ok_button.click()
    assert dialog.result() == QDialog.DialogCode.Accepted  # "87" was answered with it: no second lookup
    assert lookups.waiting == []


def test_supersede_dialog_waits_for_the_answer_about_the_text_ok_was_pressed_for(qtbot):
    lookups = _Lookups(["evt_52"])
    dialog = SupersedeDialog(["evt_51"], None, lookup=lookups)
    qtbot.addWidget(dialog)
    dialog.existing_id.setText("evt_52")
    dialog.ok_button.click()
    qtbot.keyClicks(dialog.existing_id, "9")  # typed on before the answer: that OK no longer stands
    lookups.answer_all()
    assert dialog.result() != QDialog.DialogCode.Accepted and dialog.replacement_id() == "evt_529"


def test_a_preview_with_long_titles_shows_every_column_whole(qtbot):
    title = "Important: never store inspector passwords in plain text, use the city SSO for every login"
    steps = [Step(Action.PIN, f"blk_{n}:evt:8", title, ACTIVE, replace(ACTIVE, pinned=True)) for n in range(3)]
    dialog = PreviewDialog("Pin 3 events", steps, 40, None)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    table = dialog.table
    header = table.horizontalHeader()
    assert not table.horizontalScrollBar().isVisible()
    last = table.columnCount() - 1
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= table.viewport().width()
    for column in range(table.columnCount()):
        assert header.sectionSize(column) >= min(header.sectionSizeHint(column), 120), column
    # The title is the one column that may be elided: its tooltip has the whole text.
    assert table.item(0, 1).toolTip() == title
