"""Undo stall: the longest UI-thread stall while Edit ▸ Undo runs behind 20 queued page loads.

Builds a SQLite memory of N events (the reference fixture's events copied, as `bench/app_memory.py` does),
opens it writable in the real main window (offscreen), pins one event through curation, then asks the Events
table for 20 pages of rows it has not built yet (20 row loads queue on the database worker) and triggers
Edit ▸ Undo. A 1 ms timer on the UI thread records the longest gap between its ticks until the undo has
committed and every page has arrived: that gap is the longest time the window could not repaint or take input.
The time Edit ▸ Undo itself holds the UI thread is reported apart (it waited for the database before).

    .venv/bin/python bench/undo_stall.py [--events 8000] [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_memory import NAMESPACE, build_database
from report import markdown_table, write_section

PAGES = 20


def measure(path: Path, repeats: int) -> dict[str, float]:
    from PySide6.QtCore import QSettings, QTimer

    from stratagate_gui.application import build_main_window, create_application
    from stratagate_gui.curation.actions import Action

    app = create_application()
    window = build_main_window(QSettings(str(path.with_suffix(".ini")), QSettings.Format.IniFormat))
    window.resize(1280, 800)
    window.show()
    window.open_location(str(path), NAMESPACE)
    window.wait_idle(600_000)
    controller = window.curation.controller
    controller.preview = False
    model = window.events.model
    chunk = model.CHUNK_SIZE
    stalls, undo_ms, trigger_ms = [], [], []
    for _ in range(repeats):
        controller.request(Action.PIN, ["evt_51"])
        window.wait_idle(600_000)
        model.expose_through(min(model.total, PAGES * chunk) - 1)
        model.refresh_rows()  # built rows go stale, as after any write
        window.wait_idle(600_000)
        ticks = [time.perf_counter()]
        timer = QTimer()
        timer.setInterval(1)
        timer.timeout.connect(lambda record=ticks: record.append(time.perf_counter()))
        timer.start()
        for page in range(PAGES):  # what a view asks for while it repaints: one row per page
            model.data(model.index(page * chunk, 0))
        started = time.perf_counter()
        window.undo_action.trigger()
        trigger_ms.append((time.perf_counter() - started) * 1000)
        while window.worker.pending or window.history.busy:
            app.processEvents()
        undo_ms.append((time.perf_counter() - started) * 1000)
        app.processEvents()
        timer.stop()
        ticks.append(time.perf_counter())
        stalls.append(max(b - a for a, b in zip(ticks, ticks[1:], strict=False)) * 1000)
    window.close()
    return {"stall_ms": max(stalls), "stall_median_ms": statistics.median(stalls),
            "trigger_ms": max(trigger_ms), "undo_ms": statistics.median(undo_ms), "events": model.total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=8_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="4,000 events, one repeat")
    parser.add_argument("--label", default="this build", help="the row's name in the table")
    parser.add_argument("--no-write", action="store_true", help="print only, leave docs/performance.md alone")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.events, arguments.repeats = 4_000, 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "undo-stall.sqlite"
        build_database(path, arguments.events)
        result = measure(path, arguments.repeats)
    row = (arguments.label, f"{result['events']:,}", PAGES, f"{result['trigger_ms']:.1f}",
           f"{result['stall_ms']:.0f}", f"{result['stall_median_ms']:.0f}", f"{result['undo_ms']:.0f}")
    table = markdown_table(("build", "events", "pages queued", "Edit ▸ Undo blocks the UI for (ms)",
                            "longest UI stall (ms)", "median of runs (ms)", "undo committed after (ms)"), [row])
    print(table)
    if not arguments.no_write:
        write_section("undo-stall", "## Undo with 20 pages loading (bench/undo_stall.py)\n\n" + table)


if __name__ == "__main__":
    main()
