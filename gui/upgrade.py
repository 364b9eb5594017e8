"""File ▸ Upgrade to schema v7…: the app's one way to upgrade an older SQLite file, after saying what it costs.

Opening never upgrades a file (an agent running the reference keeps a v5 file and stops once it is v7). This
action asks first, in a dialog that says the reference will no longer open the file and where the backup
goes; then it closes the memory, runs `stratagate.storage.upgrade.upgrade_file` on the database worker and
reopens the file writable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from stratagate.storage.schema import SCHEMA_VERSION
from stratagate.storage.upgrade import backup_path, upgrade_file

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.main_window import MainWindow

ACTION_TEXT = "Upgrade to schema v&7…"


def add_upgrade_action(window: MainWindow) -> QAction:
    """Add the action to `window.file_menu` (a `MainWindow`); it is enabled while an older SQLite file is open."""
    action = QAction(ACTION_TEXT, window)
    action.triggered.connect(lambda: upgrade_open_file(window))
    window.file_menu.addAction(action)
    window.memory_changed.connect(lambda memory: action.setEnabled(upgradable(memory) is not None))
    action.setEnabled(False)
    return action


def upgradable(memory: StrataGate | None) -> tuple[Path, int] | None:
    """(file, schema version) when `memory` is an SQLite file older than v7."""
    backend = getattr(memory, "backend", None)
    version = getattr(backend, "schema_version", SCHEMA_VERSION)
    if backend is None or getattr(backend, "dialect", None) != "sqlite" or version >= SCHEMA_VERSION:
        return None
    return Path(backend.location), version


def confirmation(window: MainWindow, path: Path, version: int) -> QMessageBox:
    """The question asked before upgrading: what the reference will do afterwards, and where the backup is."""
    box = QMessageBox(window)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Upgrade to schema v7")
    box.setText(f"Upgrade {path.name} from schema {version} to schema {SCHEMA_VERSION}?")
    box.setInformativeText(
        f"After the upgrade the reference StrataGate (schema {version}) will no longer open this file, so an "
        f"agent that keeps its memory in it stops working (it reports \"SQLite schema {SCHEMA_VERSION} is newer "
        f"than supported schema {version}\").\n\n"
        f"A complete copy of the file as it is now is written first:\n{backup_path(path, version)}\n\n"
        "Curation does not need the upgrade: schema 5 and 6 files are curated in their own schema."
    )
    box.setStandardButtons(QMessageBox.StandardButton.Cancel)
    box.addButton("Upgrade", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box


def upgrade_open_file(window: MainWindow, ask: Callable[[QMessageBox], bool] | None = None) -> None:
    """Ask, then upgrade the open file and reopen it. `ask(box)` says yes or no (default: the dialog, modal)."""
    target = upgradable(window.memory)
    if target is None:
        return
    path, version = target
    box = confirmation(window, path, version)
    accepted = (ask or _ask_with_dialog)(box)
    box.deleteLater()
    if not accepted:
        return
    namespace = window.opened.namespace if window.opened is not None else None
    window.close_memory()  # queued before the upgrade on the same worker: no connection of ours stays open

    def reopen(result: Any) -> None:
        window.statusBar().showMessage(f"Upgraded {path} to schema {SCHEMA_VERSION}; backup: {result.backup}", 15000)
        window.open_location(str(path), namespace)

    window.worker.run(
        lambda: upgrade_file(path),
        on_done=reopen,
        on_error=lambda error: window.writes.report(f"upgrade {path} to schema {SCHEMA_VERSION}", error),
        description=f"upgrade {path}",
    )


def _ask_with_dialog(box: QMessageBox) -> bool:
    box.exec()
    return box.buttonRole(box.clickedButton()) == QMessageBox.ButtonRole.AcceptRole
