"""Opening memories from the command line and by drag and drop, themes, and the progress dialog."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from stratagate import __version__
from stratagate_gui.app import parse_arguments
from stratagate_gui.application import open_from_arguments
from stratagate_gui.theme import plot_colours


def test_command_line_opens_a_namespace_read_only(make_window, reference_db_copy: Path):
    window = make_window()
    arguments = parse_arguments([str(reference_db_copy), "--read-only", "--namespace", "project:atlas"])
    open_from_arguments(window, arguments)
    assert window.wait_idle()
    assert window.memory.read_only and window.memory.namespace == "project:atlas"
    assert window.opened.location == str(reference_db_copy)


def test_unknown_namespace_is_refused_by_name(make_window, reference_db_copy: Path, monkeypatch):
    shown: list[str] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: shown.append(text)
    open_from_arguments(window, parse_arguments([str(reference_db_copy), "--namespace", "nope"]))
    assert window.wait_idle()
    assert window.memory is None
    assert len(shown) == 1 and "'nope'" in shown[0] and "project:atlas" in shown[0]


def test_dropping_a_file_opens_it(make_window, reference_db_copy: Path):
    window = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(reference_db_copy))])
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    assert window.wait_idle()
    assert window.memory is not None and window.opened.location == str(reference_db_copy)


def test_dark_theme_recolours_widgets_and_plots(opened_window, settings):
    opened_window.set_theme("dark")
    window_colour = QApplication.instance().palette().color(QPalette.ColorRole.Window)
    assert window_colour.lightness() < 80
    background, _foreground = plot_colours("dark")
    for plot in opened_window.findChildren(pg.PlotWidget):
        assert plot.backgroundBrush().color().name() == background
    assert settings.value("theme") == "dark"
    opened_window.set_theme("light")
    assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() > 180


def test_opening_shows_a_progress_dialog_until_done(make_window, reference_db_copy: Path):
    window = make_window()
    window.open_location(str(reference_db_copy))
    assert window._progress is not None and window._progress.labelText().startswith("Opening ")
    assert window.wait_idle()
    assert window._progress is None


def test_demo_is_built_into_the_cache_once_and_opened(make_window, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    window = make_window()
    open_from_arguments(window, parse_arguments(["--demo", "--read-only"]))
    assert window.wait_idle(120_000)
    demo = tmp_path / "cache" / "stratagate-inspector" / f"demo-{__version__}.sqlite"
    assert window.opened.location == str(demo) and window.memory.read_only
    assert window.events.model.total > 0 and len(window.timeline.plot.bars) > 0
    built = demo.stat().st_mtime_ns
    open_from_arguments(window, parse_arguments(["--demo", "--read-only", "--namespace", "demo:nimbus"]))
    assert window.wait_idle(120_000)
    assert window.memory.namespace == "demo:nimbus"
    assert demo.stat().st_mtime_ns == built  # cached: not rebuilt


def test_switching_memories_shows_only_the_new_one(make_window, tmp_path: Path, reference_db_copy: Path,
                                                   monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shown: list[str] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: shown.append(text)
    open_from_arguments(window, parse_arguments(["--demo", "--read-only"]))
    assert window.wait_idle(120_000)
    window.elements.select_element(window.elements.element_ids[1])
    window.open_location(str(reference_db_copy), read_only=True)
    assert window.wait_idle()
    assert shown == []
    assert window.elements.element.id == "elem_2"
    assert [bar[0] for bar in window.timeline.plot.bars] == ["blk_25", "blk_50", "blk_82"]
    assert window.events.model.total == 12


def test_missing_files_and_unsupported_urls_are_refused_without_creating_anything(make_window, tmp_path: Path,
                                                                                   monkeypatch):
    shown: list[str] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: shown.append(text)
    missing = tmp_path / "typo.sqlite"
    for location in (str(missing), str(tmp_path), "mysql://user@host/db"):
        window.open_location(location)
        assert window.wait_idle()
    assert shown == [
        f"Cannot open {missing}\n\nno such file",
        f"Cannot open {tmp_path}\n\nis a directory, not a database file",
        "Cannot open mysql://user@host/db\n\nonly SQLite and PostgreSQL are supported",
    ]
    assert not missing.exists() and window.memory is None


def test_a_database_urls_password_never_reaches_a_dialog(make_window):
    shown: list[str] = []
    failed: list[tuple[str, str]] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: shown.append(text)
    window.open_failed.connect(lambda location, reason: failed.append((location, reason)))
    window.open_location("postgresql+psycopg://ada:hunter2@127.0.0.1:1/memory")
    assert window.wait_idle(60_000)
    (text,) = shown
    assert "hunter2" not in text and "hunter2" not in failed[0][0] + failed[0][1]
    assert "postgresql+psycopg://ada:***@127.0.0.1:1/memory" in text


def test_help_about_names_the_version_schemas_and_licences(make_window):
    from stratagate import __version__
    from stratagate_gui.about import AboutDialog

    window = make_window()
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus[-1] == "&Help" and "&Strata" in menus
    about = next(action for action in window.help_menu.actions() if action.text().startswith("&About"))
    about.trigger()
    dialog = window.findChild(AboutDialog)
    assert dialog is not None and dialog.isVisible()
    text = dialog.text.text()
    for expected in (__version__, "v1–v7", "v8–v12 read-only", "LGPL-3.0", "DejaVu", "docs/user-guide.md"):
        assert expected in text
    dialog.close()


def test_an_uncaught_exception_shows_its_traceback_instead_of_vanishing(make_window, qtbot):
    import sys

    from stratagate_gui.about import CrashDialog, show_uncaught_errors

    window = make_window()
    previous = show_uncaught_errors(window)
    try:
        try:
            raise RuntimeError("a bug in a slot")
        except RuntimeError as error:
            sys.excepthook(type(error), error, error.__traceback__)
        dialog = window.findChild(CrashDialog)
        assert dialog is not None and dialog.isVisible()
        assert "RuntimeError: a bug in a slot" in dialog.traceback.toPlainText()
        assert "Traceback (most recent call last)" in dialog.traceback.toPlainText()
        dialog.close()
    finally:
        sys.excepthook = previous


def test_without_a_display_the_app_says_what_to_do_in_one_line(monkeypatch, capsys):
    import sys

    from stratagate_gui.app import main

    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    assert main([]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--self-test" in line and "QT_QPA_PLATFORM=offscreen" in line


def test_every_control_without_a_visible_label_has_an_accessible_name(make_window):
    from PySide6.QtWidgets import (
        QAbstractItemView,
        QAbstractSlider,
        QAbstractSpinBox,
        QComboBox,
        QHeaderView,
        QLabel,
        QLineEdit,
        QPlainTextEdit,
        QScrollBar,
        QTextEdit,
    )

    window = make_window()
    labelled = {id(label.buddy()) for label in window.findChildren(QLabel) if label.buddy() is not None}
    inputs = (QLineEdit, QComboBox, QAbstractSpinBox, QAbstractSlider, QAbstractItemView, QPlainTextEdit, QTextEdit)
    parts_of_other_controls = (QComboBox, QAbstractSpinBox, QAbstractItemView)
    unnamed = [
        control for control in window.findChildren(QWidget)
        if isinstance(control, inputs) and not isinstance(control, QHeaderView | QScrollBar)
        and not isinstance(control.parent(), parts_of_other_controls)
        and not isinstance(control.parent() and control.parent().parent(), QComboBox)
        and not control.accessibleName() and id(control) not in labelled
    ]
    assert unnamed == []
