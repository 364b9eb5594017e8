"""App memory: RSS of the inspector with a 100k-event memory open and its event list scrolled to the end.

Builds a SQLite memory holding the reference fixture's blocks and elements plus N copies of its events,
opens it in the real main window (offscreen), scrolls the event list to the last row, and reports the
process's resident memory and the open time. The "empty window" row, measured in the same process before
anything is opened, is the baseline the ratio compares against. Budget: < 400 MB with 100k events.

    .venv/bin/python bench/app_memory.py [--events 100000] [--quick]

The database is built in this process; the app runs in a fresh child process, so its RSS counts only the app.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, write_section

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "reference-v5-basic.snapshot.json"
NAMESPACE = "project:atlas"
BUDGET_MB = 400


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def build_database(path: Path, events: int) -> None:
    from stratagate.snapshot import normalize_snapshot
    from stratagate.storage.sql import open_backend

    snapshot = normalize_snapshot(json.loads(FIXTURE.read_text())[NAMESPACE]["snapshot"])
    originals = [event for event in snapshot["events"] if not event.get("supersededBy")]
    extra = []
    for number in range(events - len(snapshot["events"])):
        event = copy.deepcopy(originals[number % len(originals)])
        event["id"] = f"evt_bench_{number}"
        event["title"] = f"{event['title']} #{number}"
        event["temporal"].pop("supersedesEventIds", None)
        extra.append(event)
    snapshot["events"] = snapshot["events"] + extra
    backend = open_backend(path)
    try:
        backend.import_namespace(NAMESPACE, snapshot)
    finally:
        backend.close()


def measure(path: Path) -> dict[str, float]:
    from PySide6.QtCore import QSettings

    from stratagate_gui.application import build_main_window, create_application

    app = create_application()
    settings = QSettings(str(path.with_suffix(".ini")), QSettings.Format.IniFormat)
    window = build_main_window(settings)
    window.resize(1280, 800)
    window.show()
    app.processEvents()
    empty = rss_mb()
    start = time.perf_counter()
    window.open_location(str(path), read_only=True)
    window.wait_idle(600_000)
    opened = time.perf_counter() - start
    window.show_view(window.events)
    table, model = window.events.table, window.events.model
    while model.canFetchMore():
        model.fetchMore()
    # Drag the scroll bar from top to bottom in 200 steps; the slowest step is the worst stall a user sees
    # (rows are built on the database worker, so the UI thread only paints).
    scroll_bar = table.verticalScrollBar()
    slowest = 0.0
    for step in range(201):
        scroll_bar.setValue(scroll_bar.maximum() * step // 200)
        started = time.perf_counter()
        app.processEvents()
        slowest = max(slowest, time.perf_counter() - started)
    table.scrollToBottom()
    window.wait_idle(600_000)
    app.processEvents()
    last = model.index(model.rowCount() - 1, 0).data()
    window.wait_idle(600_000)
    result = {"empty": empty, "open_s": opened, "rss": rss_mb(), "rows": model.rowCount(), "last": last,
              "slowest_step_ms": slowest * 1000}
    window.close()
    return result


def measure_in_child(path: Path) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, __file__, "--measure", str(path)], check=True, capture_output=True, text=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="10,000 events, for a fast check")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.events = 10_000
    if arguments.measure:
        print(json.dumps(measure(arguments.measure)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "app-memory.sqlite"
        build_database(path, arguments.events)
        result = measure_in_child(path)
    rows = [
        ("empty window", "—", "—", f"{result['empty']:.0f}", "1.00×", ""),
        (
            f"{result['rows']:,} events, scrolled to the end",
            f"{result['open_s']:.2f}",
            f"{result['slowest_step_ms']:.0f}",
            f"{result['rss']:.0f}",
            f"{result['rss'] / result['empty']:.2f}×",
            "yes" if result["rss"] < BUDGET_MB else "NO",
        ),
    ]
    table = markdown_table(("app state", "open (s)", "slowest scroll step (ms)", "RSS (MB)", "RSS vs empty window", f"< {BUDGET_MB} MB"), rows)
    print(table)
    write_section(
        "app-memory",
        "## App memory (bench/app_memory.py)\n\nThe inspector opened read-only (forensic copy) on a SQLite memory, "
        "its event list scrolled to the last row; RSS of the app process.\n\n" + table,
    )


if __name__ == "__main__":
    main()
