"""Retrieval forensics on copies of the reference database: the query workbench explains every hit and
writes nothing; the receipts browser replays a query as of a receipt and marks the drift."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stratagate import journal
from stratagate.memory import open as open_memory
from stratagate_gui.curation.actions import Action
from stratagate_gui.curation.controller import CurationController
from stratagate_gui.forensics.receipts import DRIFT_COLOR, REPLAY_COLUMNS, ReceiptsBrowser
from stratagate_gui.forensics.workbench import MAX_COLUMN_WIDTH, QueryWorkbench
from stratagate_gui.shortcuts import select_row
from stratagate_gui.undo import UndoHistory
from stratagate_gui.widgets.tables import LONG_TEXT
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import Writes
from tests.conftest import REFERENCE_NAMESPACE
from tests.gui.test_curation import dump_rows


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def worker():
    worker = DatabaseWorker()
    yield worker
    worker.shutdown()


@pytest.fixture
def memory(reference_db_copy: Path, worker):
    memory = open_memory(
        reference_db_copy, REFERENCE_NAMESPACE, now=lambda: datetime(2026, 12, 1, tzinfo=UTC)
    )
    yield memory
    worker.call(memory.close)


@pytest.fixture
def workbench(qtbot, worker, memory):
    widget = QueryWorkbench(worker)
    qtbot.addWidget(widget)
    widget.set_memory(memory)
    return widget


def _run(qtbot, workbench: QueryWorkbench):
    with qtbot.waitSignal(workbench.finished) as signal:
        workbench.run_button.click()
    return signal.args[0]


def _column(table, header: str) -> int:
    headers = [table.horizontalHeaderItem(column).text() for column in range(table.columnCount())]
    return headers.index(header)


def test_event_query_shows_ranks_per_ranking_matched_filters_and_exclusions(qtbot, workbench):
    workbench.query.setText("Atlas storage database")
    workbench.participants.setText("Bob")
    workbench.limit.setValue(4)
    result = _run(qtbot, workbench)
    assert result.mode == "hard filters"
    assert result.tokens == ["word:atlas", "word:storage", "word:database"]
    assert [hit.id for hit in result.hits] == ["evt_53", "evt_85", "evt_51", "evt_55"]
    table = workbench.hits
    assert table.rowCount() == 4
    first = {
        name: table.item(0, _column(table, name)).text() for name in ("Id", "rank: bm25", "rank: structured")
    }
    assert first == {"Id": "evt_53", "rank: bm25": "1", "rank: structured": "3"}
    assert table.item(0, _column(table, "Matched filters")).text() == "participants"
    assert table.item(1, _column(table, "Weight")).text() == "0.549"
    excluded = {
        workbench.excluded.item(row, 0).text(): workbench.excluded.item(row, 1).text()
        for row in range(workbench.excluded.rowCount())
    }
    assert excluded["evt_52"] == "filter mismatch: participants"
    assert excluded["evt_86"] == "cut by limit 4 (fused rank 5)"


def test_selecting_a_hit_shows_bm25_contributions_by_field_that_add_up(qtbot, workbench):
    workbench.query.setText("Atlas storage")
    result = _run(qtbot, workbench)
    select_row(workbench.hits, 0)
    hit = result.hits[0]
    assert hit.contributions and abs(sum(c.score for c in hit.contributions) - hit.bm25_score) < 1e-9
    rows = workbench.contributions.rowCount()
    fields = {workbench.contributions.item(row, 1).text() for row in range(rows)}
    assert {"title", "summary"} <= fields
    assert "BM25" in workbench.detail.text() and "idf" in workbench.detail.text()


def test_soft_filters_name_the_filters_a_hit_matched(qtbot, workbench):
    workbench.query.setText("Atlas")
    workbench.participants.setText("Nobody-here")
    workbench.event_type.setText("release")
    result = _run(qtbot, workbench)
    assert result.mode == "soft filters"
    matched = {hit.id: hit.matched_filters for hit in result.hits}
    assert matched["evt_85"] == ["eventType"]
    assert "rank: structured:eventType" in [
        workbench.hits.horizontalHeaderItem(column).text() for column in range(workbench.hits.columnCount())
    ]


def test_happened_window_and_temporal_intent_filters(qtbot, workbench):
    workbench.query.setText("Atlas demo")
    workbench.happened_from.setText("2026-03-15")
    workbench.happened_to.setText("2026-03-31")
    workbench.temporal_intent.setCurrentText("latest")
    result = _run(qtbot, workbench)
    assert result.spec.options == {
        "temporal_intent": "latest",
        "happened_from": "2026-03-15",
        "happened_to": "2026-03-31",
    }
    assert result.mode == "hard filters"
    ranks = {hit.id: hit.ranks for hit in result.hits}
    assert set(ranks) == {"evt_54", "evt_84"}
    assert ranks["evt_84"]["structured"] == 0  # "latest": March 27 before March 20
    assert all(hit.matched_filters == ["happened"] for hit in result.hits)
    assert dict(result.excluded)["evt_85"] == "filter mismatch: happened"


def test_element_and_raw_memory_searches(qtbot, workbench):
    workbench.kind.setCurrentIndex(1)
    workbench.query.setText("Bob")
    workbench.element_type.setCurrentText("person")
    result = _run(qtbot, workbench)
    assert result.hits[0].label == "Bob · based_in = Berlin"
    assert result.hits[0].matched_filters == ["type"]
    assert ("fact_3", "filter mismatch: type") in result.excluded
    workbench.kind.setCurrentIndex(2)
    workbench.query.setText("PostgreSQL")
    result = _run(qtbot, workbench)
    assert len(result.hits) == 5 and all(hit.label.startswith("blk_") for hit in result.hits)


def test_the_workbench_writes_nothing(qtbot, workbench, memory, reference_db_copy: Path):
    rows, revision = dump_rows(reference_db_copy), memory.revision
    for kind, query in ((0, "Atlas"), (1, "Alice"), (2, "demo")):
        workbench.kind.setCurrentIndex(kind)
        workbench.query.setText(query)
        _run(qtbot, workbench)
    assert memory.revision == revision
    assert dump_rows(reference_db_copy) == rows


def test_read_only_open_stays_byte_identical_after_queries_and_attempted_curation(
    qtbot, reference_db_copy: Path
):
    digest = _sha256(reference_db_copy)
    worker = DatabaseWorker()
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE, read_only=True)
    workbench = QueryWorkbench(worker)
    qtbot.addWidget(workbench)
    workbench.set_memory(memory)
    workbench.query.setText("Atlas storage")
    assert _run(qtbot, workbench).hits
    writes = Writes(worker)
    writes.set_memory(memory)
    stack = UndoHistory(writes)
    controller = CurationController(writes, stack)
    controller.confirm = lambda *_: True
    controller.request(Action.FORGET, ["evt_83"])
    qtbot.waitUntil(lambda: worker.pending == 0)
    assert stack.count() == 0
    worker.call(memory.close)
    worker.shutdown()
    assert _sha256(reference_db_copy) == digest
    assert sorted(path.name for path in reference_db_copy.parent.iterdir()) == [reference_db_copy.name]


def test_receipts_browser_lists_audits_and_replay_marks_drift(qtbot, worker, memory, reference_db_copy: Path):
    # Curate after the receipts were recorded: forget the event the first receipt used.
    writes = Writes(worker)
    writes.set_memory(memory)
    stack = UndoHistory(writes)
    controller = CurationController(writes, stack)
    controller.confirm = lambda *_: True
    controller.request(Action.FORGET, ["evt_83"])
    qtbot.waitUntil(lambda: worker.pending == 0 and stack.count() == 1)

    browser = ReceiptsBrowser(worker)
    qtbot.addWidget(browser)
    browser.set_memory(memory, lambda: journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE))
    qtbot.waitUntil(lambda: browser.table.rowCount() == 3)
    assert [browser.table.item(0, column).text() for column in (0, 2, 4, 8, 9)] == [
        "answer:1",
        "evt_83",
        "sufficient",
        "chat-7",
        "37",
    ]
    assert browser.table.item(1, 6).text() == "Which room the demo is in."
    verdicts = [browser.table.item(row, 4).text() for row in range(3)]
    browser.verdict_filter.setCurrentText("sufficient")
    assert [not browser.table.isRowHidden(row) for row in range(3)] == [v == "sufficient" for v in verdicts]
    browser.verdict_filter.setCurrentText("(all)")
    select_row(browser.table, 0)
    browser.query.setText("Atlas storage database")
    with qtbot.waitSignal(browser.replayed) as signal:
        browser.replay_button.click()
    result = signal.args[0]
    assert result.turn_then == 37 and result.rolled_back == 1
    by_id = {row.id: row for row in result.rows}
    used = by_id["evt_83"]
    assert (used.in_receipt, used.rank_then, used.rank_now) == (True, 1, None)
    assert (used.status_then, used.status_now) == ("active", "forgotten")
    assert used.weight_now == 0.0 and used.weight_then > 0
    assert "forgotten now" in used.drift and "used in the receipt, not a hit now" in used.drift
    assert "new hit" in by_id["evt_85"].drift
    drift_column = REPLAY_COLUMNS.index("Drift")
    assert browser.replay_table.item(0, drift_column).text().startswith("forgotten now")
    assert browser.replay_table.item(0, 0).foreground().color() == DRIFT_COLOR
    assert "1 event(s) with curation rolled back" in browser.summary.text()
    # Only what drifted is coloured: evt_83's title did not change, its status did.
    title, status_then = REPLAY_COLUMNS.index("Title"), REPLAY_COLUMNS.index("Status then")
    assert browser.replay_table.item(0, title).foreground().color() != DRIFT_COLOR
    assert browser.replay_table.item(0, status_then).foreground().color() == DRIFT_COLOR
    steady = [n for n, row in enumerate(result.rows) if not row.drift]
    assert all(browser.replay_table.item(n, 0).foreground().color() != DRIFT_COLOR for n in steady)
    # The drift column is in view at a laptop width, no column runs off the screen, a long note keeps its
    # whole text in the tooltip, and values read as words.
    browser.resize(900, 700)
    browser.show()
    table = browser.replay_table
    header = table.horizontalHeader()
    assert header.sectionViewportPosition(drift_column) + 60 < table.viewport().width()
    assert all(header.sectionSize(column) <= MAX_COLUMN_WIDTH for column in range(len(REPLAY_COLUMNS) - 1))
    note = table.item(0, drift_column)
    assert len(note.text()) <= LONG_TEXT or note.toolTip() == note.text()
    assert table.item(0, REPLAY_COLUMNS.index("In receipt")).text() == "yes"
    stack.clear()


def test_the_workbench_forgets_no_memory_open_once_one_is_open(qtbot, worker, memory):
    workbench = QueryWorkbench(worker)
    qtbot.addWidget(workbench)
    assert workbench.summary.text() == "No memory open"
    workbench.set_memory(memory)
    assert workbench.summary.text() == "" and workbench.run_button.isEnabled()


def test_a_receipt_row_reads_in_human_values():
    from stratagate.model import UsageReceipt
    from stratagate_gui.forensics.receipts import RECEIPT_COLUMNS, receipt_row

    receipt = UsageReceipt("answer:9", ["evt_1", "evt_2"], [], "2026-03-01T10:00:00Z", {"verdict": "partial", "fit": 0.5})
    row = dict(zip(RECEIPT_COLUMNS, receipt_row(receipt), strict=True))
    assert row["Events"] == "evt_1, evt_2" and row["Elements"] == "—"
    assert (row["Verdict"], row["Fit"], row["Missing"], row["Turn"]) == ("partial", "0.500", "—", "—")
