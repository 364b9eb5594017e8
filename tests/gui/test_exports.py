"""Exports from the app: the event list as CSV/JSON, a card as Markdown, the journal as JSON lines, a retrieval
explanation and a receipt replay as JSON/Markdown."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from stratagate_gui.curation.actions import Action
from stratagate_gui.views.elements import FACT_COLUMNS
from stratagate_gui.views.events import EVENT_COLUMNS
from tests.gui.test_app_views import wait_rows


def test_the_event_list_exports_as_csv_and_json_in_the_tables_order(opened_window, qtbot, tmp_path: Path):
    events = opened_window.events
    wait_rows(qtbot, opened_window, events.model)
    events.filters.status.setCurrentText("superseded")
    qtbot.waitUntil(lambda: events.model.total == 2)
    events.export_rows(tmp_path / "events.csv")
    events.export_rows(tmp_path / "events.json")
    assert opened_window.wait_idle()
    with (tmp_path / "events.csv").open(encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0] == list(EVENT_COLUMNS) and [row[-1] for row in table[1:]] == ["evt_53", "evt_54"]
    records = json.loads((tmp_path / "events.json").read_text(encoding="utf-8"))
    assert [(record["Id"], record["Status"]) for record in records] == [("evt_53", "superseded"), ("evt_54", "superseded")]


def test_an_event_card_saves_as_markdown(opened_window, tmp_path: Path):
    opened_window.events.save_card("evt_83", tmp_path / "card.md")
    assert opened_window.wait_idle()
    text = (tmp_path / "card.md").read_text(encoding="utf-8")
    assert "Switched Atlas storage to PostgreSQL" in text and "Supersedes" in text


def test_the_journal_exports_as_json_lines(opened_window, tmp_path: Path):
    opened_window.curation.controller.preview = False
    opened_window.curation.controller.request(Action.PIN, ["evt_51"])
    assert opened_window.wait_idle()
    opened_window.curation.journal.export_to(tmp_path / "journal.jsonl")
    assert opened_window.wait_idle()
    (line,) = (tmp_path / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert (entry["action"], entry["ids"], entry["actor"]) == ("pin", ["evt_51"], "reviewer")


def test_a_retrieval_explanation_and_a_replay_export_as_json_and_markdown(opened_window, qtbot, tmp_path: Path):
    workbench = opened_window.curation.workbench
    workbench.query.setText("Atlas storage database")
    with qtbot.waitSignal(workbench.finished):
        workbench.run_button.click()
    workbench.export_to(tmp_path / "why.json")
    workbench.export_to(tmp_path / "why.md")
    explanation = json.loads((tmp_path / "why.json").read_text(encoding="utf-8"))
    assert explanation["hits"][0]["id"] == workbench.result.hits[0].id and "excluded" in explanation
    assert explanation["hits"][0]["contributions"], "the BM25 terms of the hit are exported"
    markdown = (tmp_path / "why.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Query workbench") and f"| 1 | {workbench.result.hits[0].id} |" in markdown

    receipts = opened_window.curation.receipts
    qtbot.waitUntil(lambda: receipts.table.rowCount() == 3)
    receipts.table.selectRow(0)
    with qtbot.waitSignal(receipts.replayed):
        receipts.replay_button.click()
    receipts.export_to(tmp_path / "replay.json")
    replay = json.loads((tmp_path / "replay.json").read_text(encoding="utf-8"))
    assert replay["receipt_id"] == receipts.result.receipt_id and replay["rows"]


def test_an_element_card_saves_as_markdown_and_its_facts_as_csv_and_json(opened_window, tmp_path: Path):
    elements = opened_window.elements
    elements.element_list.setCurrentRow(0)
    assert opened_window.wait_idle()
    element = elements.element
    assert elements.save_card_button.isEnabled() and elements.export_facts_button.isEnabled()
    elements.save_card(tmp_path / "element.md")
    elements.export_facts(tmp_path / "facts.csv")
    elements.export_facts(tmp_path / "facts.json")
    assert opened_window.wait_idle()
    card = (tmp_path / "element.md").read_text(encoding="utf-8")
    assert card.startswith(f"## {element.name}") and "### Facts" in card
    assert all(f"| {fact.key} | {fact.mode} |" in card for fact in element.facts)
    with (tmp_path / "facts.csv").open(encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    shown = [[elements.facts.item(row, column).text() for column in range(elements.facts.columnCount())]
             for row in range(elements.facts.rowCount())]
    assert table[0] == list(FACT_COLUMNS) and table[1:] == shown
    records = json.loads((tmp_path / "facts.json").read_text(encoding="utf-8"))
    assert [record["Key"] for record in records] == [fact.key for fact in element.facts]
    opened_window.close_memory()
    assert not elements.save_card_button.isEnabled() and not elements.export_facts_button.isEnabled()
