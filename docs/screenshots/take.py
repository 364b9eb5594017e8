"""Regenerate the user guide's screenshots of the newer views from the real app, on a copy of the demo memory.

Run under a virtual display (menus and dialogs are separate windows, so the screen is grabbed, not the
window), then shrink the PNGs to an 8-bit palette:

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python docs/screenshots/take.py
    for f in docs/screenshots/*.png; do convert "$f" -colors 256 PNG8:"$f"; done
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, QPoint, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDockWidget, QSplitter, QWidget

HERE = Path(__file__).resolve().parent
WIDTH, HEIGHT = 1400, 860


def settle(window, seconds: float = 0.4, wait_for_worker: bool = True) -> None:
    if wait_for_worker:
        window.wait_idle()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.02)


def save_screen(name: str, widget: QWidget | None = None) -> None:
    """The screen under `widget` (default: the main window), with any menu or dialog above it."""
    target = widget or QApplication.activeWindow()
    frame = target.frameGeometry()
    pixmap = QApplication.primaryScreen().grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height())
    pixmap.save(str(HERE / f"{name}.png"))
    print("saved", name)


def with_modal(window, name: str, open_it: Callable[[], object], close: Callable[[QWidget], object]) -> None:
    """Screenshot a dialog that `open_it` runs modally (exec or a static getter): grab it once shown."""

    def grab() -> None:
        dialog = QApplication.activeModalWidget()
        settle(window, 0.3)
        save_screen(name, window)
        close(dialog)

    QTimer.singleShot(1200, grab)
    open_it()


def main() -> int:
    from stratagate.search.index import InvertedIndex
    from stratagate_gui.about import AboutDialog
    from stratagate_gui.application import build_main_window, create_application, ensure_demo_database
    from stratagate_gui.curation.actions import Action
    from stratagate_gui.strata.mount import open_data_directory
    from stratagate_gui.views.events import EVENT_COLUMNS
    from stratagate_gui.widgets.row_menu import row_menu

    scratch = Path(tempfile.mkdtemp(prefix="stratagate-shots-"))
    demo = scratch / "demo.sqlite"
    shutil.copy(ensure_demo_database(), demo)
    create_application()
    window = build_main_window(QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat))
    window.findChild(QDockWidget, "liveChangesDock").hide()  # empty without another writer
    window.setGeometry(0, 0, WIDTH, HEIGHT)
    window.show()
    window.open_location(str(demo))
    settle(window, 1.0)
    curation = window.curation

    # Events: facet filters, the pinned column, the time lanes with month and year ticks.
    events = window.events
    window.show_view(events)
    panes = next(split for split in events.findChildren(QSplitter) if split.orientation() == Qt.Orientation.Horizontal)
    panes.setSizes([860, 540])
    events.filters.status.setCurrentText("active")
    settle(window, 1.0)
    # Narrower date columns, so the pinned column shows beside them.
    for column, width in enumerate((250, 80, 60, 80, 55, 100, 85, 85, 55)):
        events.table.setColumnWidth(column, width)
    events.select_event("blk_54:evt:8")
    settle(window, 1.0)
    save_screen("events-facets", window)
    panes.setSizes([560, 840])  # a wide time axis: months and days between them
    ids = [events.model.id_at(row) for row in range(events.model.total)]
    for event_id in ("blk_15:evt:2", "blk_93:evt:8", "blk_112:evt:6", "blk_84:evt:2"):
        events.table.selectionModel().select(
            events.model.index(ids.index(event_id), 0),
            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
        )
    lanes = next(split for split in events.findChildren(QSplitter) if split.orientation() == Qt.Orientation.Vertical)
    lanes.setSizes([300, 460])  # room for the time lanes
    settle(window, 1.0)
    save_screen("temporal-axes", window)
    lanes.setSizes([460, 300])
    panes.setSizes([860, 540])

    # The right-click menu of a row.
    events.select_event("blk_54:evt:8")
    settle(window)
    menu = row_menu(events.table, events.model, EVENT_COLUMNS, events.row_actions)
    rect = events.table.visualRect(events.table.currentIndex())
    menu.popup(events.table.viewport().mapToGlobal(QPoint(rect.x() + 200, rect.bottom())))
    settle(window)
    save_screen("context-menu", window)
    menu.close()

    # The export dialog (Export every listed event…), reached from the same menu.
    menu = row_menu(events.table, events.model, EVENT_COLUMNS, events.row_actions)
    export = next(action for action in menu.actions() if action.text().startswith("Export"))
    with_modal(window, "export-dialog", export.trigger, lambda dialog: dialog.reject())
    settle(window)

    # Curation: the preview of a pin, in human values.
    window.show_view(curation.curation)
    settle(window, 1.0)
    curation.curation.select_event("blk_34:evt:8")
    settle(window)
    curation.controller.preview = True
    with_modal(
        window,
        "curation-preview",
        lambda: curation.controller.request(Action.TOGGLE_PIN, ["blk_34:evt:8", "blk_73:evt:0"]),
        lambda dialog: dialog.accept(),
    )
    settle(window, 1.0)
    curation.controller.preview = False
    curation.controller.request(Action.TOGGLE_FORGET, ["blk_93:evt:0"])  # drifts the demo's receipt
    settle(window, 1.0)

    window.show_view(curation.journal)
    curation.journal.refresh()
    settle(window, 1.0)
    save_screen("journal", window)

    # A receipt replayed against the memory as it was and as it is: the forgotten event drifted.
    receipts = curation.receipts
    window.show_view(receipts)
    settle(window, 1.0)
    receipts.table.selectRow(0)
    receipts.query.setText("storage for Nimbus")
    receipts.replay_selected()
    settle(window, 1.5)
    save_screen("receipt-replay", window)

    # The workbench's progress dialog: the first explained search indexes every event, made slow here.
    workbench = curation.workbench
    window.show_view(workbench)
    window.worker.call(window.memory.refresh)
    original_add = InvertedIndex.add

    def slow_add(self, key, fields):
        time.sleep(0.3)
        original_add(self, key, fields)

    InvertedIndex.add = slow_add
    workbench.query.setText("storage migration")
    workbench.run()
    settle(window, 1.5, wait_for_worker=False)
    save_screen("workbench-progress", window)
    workbench.cancel_query()
    InvertedIndex.add = original_add
    settle(window, 1.0)

    # Help ▸ About.
    about = AboutDialog(window)
    about.open()
    settle(window, 0.8)
    save_screen("about", window)
    about.close()

    # A Strata store and the dry-run plan of a promote.
    store_dir = scratch / "strata_data"
    make_strata_store(store_dir)
    browser = open_data_directory(window.context, store_dir)
    settle(window, 1.0)
    view = browser.views["cooled"]
    browser.tabs.setCurrentWidget(view)
    view.selectAll()
    browser.promote_button.click()
    browser.preview_dialog.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    settle(window, 1.0)
    save_screen("strata-plan", window)
    browser.preview_dialog.reject()

    window.close()
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


def make_strata_store(folder: Path) -> None:
    from stratagate.strata import StrataConfig, StrataStore

    store = StrataStore(folder, StrataConfig())
    store.init()
    store.write("projects/nimbus.md", "# Nimbus\n\nBeta due in April; demo with the city on March 27.\n")
    stamp = time.time() - 40 * 86400
    for name, text in (
        ("entities/dana.md", "# Dana\n\nLead of project Nimbus.\n"),
        ("entities/priya.md", "# Priya\n\nDesigner; prefers Figma comments.\n"),
        ("projects/nimbus.md", "# Nimbus (older notes)\n"),
        ("decisions/storage.md", "# Storage\n\nSQLite, then PostgreSQL (March 18).\n"),
    ):
        path = store.cooled_root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (stamp, stamp))


if __name__ == "__main__":
    sys.exit(main())
