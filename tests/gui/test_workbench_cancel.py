"""A slow workbench query shows a progress dialog with Cancel after half a second; Cancel stops the search on
the database worker at its next step, keeps nothing half-built, and the next query answers."""

from __future__ import annotations

import time

from stratagate.search import stored
from tests.gui.test_open_cancel import click_cancel

STEP_SECONDS = 0.25


def test_cancel_stops_a_slow_query_and_the_worker_answers_the_next_one(opened_window, qtbot, monkeypatch):
    window = opened_window
    workbench = window.curation.workbench
    indexed: list[int] = []
    original_records = stored.read_event_records

    def slow_records(connection, namespace):
        # The first search after a write rebuilds the reference file's event index in the outside cache,
        # one event at a time: a large memory's slow step, made slow here.
        for item in original_records(connection, namespace):
            indexed.append(item[0])
            time.sleep(STEP_SECONDS)
            yield item

    monkeypatch.setattr(stored, "read_event_records", slow_records)
    memory = window.memory
    window.worker.call(lambda: memory.pin_event(memory.event_ids()[0]))  # a new revision: a new cache file
    window.show_view(workbench)
    workbench.query.setText("Atlas storage")
    started = time.monotonic()
    workbench.run_button.click()
    progress = workbench.progress
    qtbot.waitUntil(lambda: progress.isVisible(), timeout=5_000)
    assert 0.4 < time.monotonic() - started < 2.5  # after half a second (loaded machine: some slack)
    assert progress.labelText().startswith("Running events: 'Atlas storage'")
    click_cancel(qtbot, progress)
    cancelled_at = time.monotonic()
    assert workbench.progress is None and workbench.summary.text().startswith("Query cancelled")
    assert window.wait_idle(5_000)
    # Stopped at the next event, not after the remaining ones (the memory has 12 events).
    assert time.monotonic() - cancelled_at < 4 * STEP_SECONDS
    stopped_after = len(indexed)
    assert 0 < stopped_after < 12
    assert workbench.result is None and workbench.summary.text().startswith("Query cancelled")

    monkeypatch.undo()
    with qtbot.waitSignal(workbench.finished, timeout=10_000) as answered:
        workbench.run_button.click()
    result = answered.args[0]
    expected = window.worker.call(lambda: window.memory.search_events("Atlas storage", record=False))
    assert [hit.id for hit in result.hits] == [hit.event.id for hit in expected]  # nothing half-built was kept
    assert workbench.hits.rowCount() == len(expected) > 0
    assert workbench.progress is None and workbench.summary.text().startswith(f"{len(expected)} hits")


def test_a_quick_query_never_shows_the_progress_dialog(opened_window, qtbot):
    workbench = opened_window.curation.workbench
    workbench.query.setText("Atlas")
    with qtbot.waitSignal(workbench.finished, timeout=10_000):
        workbench.run_button.click()
    assert workbench.progress is None
    assert "hits" in workbench.summary.text()
