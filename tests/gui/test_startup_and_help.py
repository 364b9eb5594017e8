"""Help ▸ User guide, and the app started with no display at all (a real process, as a user would)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QPixmap, QTextDocument

from stratagate_gui.user_guide import UserGuideDialog, user_guide_path


def test_help_user_guide_shows_the_guide_with_its_screenshots(make_window):
    window = make_window()
    action = next(action for action in window.help_menu.actions() if action.text() == "&User guide")
    action.trigger()
    dialog = window.findChild(UserGuideDialog)
    assert dialog is not None and dialog.isVisible()
    text = dialog.browser.toPlainText()
    assert text.startswith("StrataGate Inspector: user guide")
    assert "--self-test" in text
    # The screenshots resolve against docs/: laying the guide out loaded them.
    document = dialog.browser.document()
    assert 'src="screenshots/timeline.png"' in document.toHtml()
    image = document.resource(QTextDocument.ResourceType.ImageResource.value, QUrl("screenshots/timeline.png"))
    assert isinstance(image, QPixmap) and not image.isNull()
    dialog.close()


def test_user_guide_that_cannot_be_read_says_where_it_was_looked_for(qtbot, tmp_path: Path):
    dialog = UserGuideDialog(guide=tmp_path / "user-guide.md")
    qtbot.addWidget(dialog)
    assert f"not readable at {tmp_path / 'user-guide.md'}" in dialog.browser.toPlainText()


def test_source_checkout_finds_the_guide_in_docs():
    assert user_guide_path() == Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
    assert user_guide_path().is_file()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for Linux")
def test_without_any_display_the_installed_app_exits_with_one_line_not_a_qt_abort(tmp_path: Path):
    program = shutil.which("stratagate-inspector", path=str(Path(sys.executable).parent))
    assert program is not None
    environment = {name: value for name, value in os.environ.items()
                   if name not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    environment["HOME"] = str(tmp_path)
    completed = subprocess.run([program], capture_output=True, text=True, timeout=120, env=environment)
    assert completed.returncode == 2  # negative would be a signal: Qt's abort and its core dump
    (line,) = completed.stderr.splitlines()
    assert "--self-test" in line and "QT_QPA_PLATFORM=offscreen" in line
    assert "xcb" not in completed.stderr and not list(tmp_path.glob("core*"))


def test_an_exception_raised_in_a_qt_slot_reaches_the_crash_dialog(make_window, qtbot):
    """Qt calls the slot, not Python code under a try: the hook is the only thing that sees the error."""
    from PySide6.QtCore import QTimer

    from stratagate_gui.about import CrashDialog, show_uncaught_errors

    window = make_window()

    def broken_slot() -> None:
        raise ValueError("raised inside a timer's slot")

    previous = show_uncaught_errors(window)
    try:
        QTimer.singleShot(0, broken_slot)
        qtbot.waitUntil(lambda: window.findChild(CrashDialog) is not None)
        dialog = window.findChild(CrashDialog)
        assert dialog.isVisible()
        assert "ValueError: raised inside a timer's slot" in dialog.traceback.toPlainText()
        assert "broken_slot" in dialog.traceback.toPlainText()
        dialog.close()
    finally:
        sys.excepthook = previous
