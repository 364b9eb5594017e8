"""Help ▸ About and the last-resort error dialog: what this build is, and what went wrong when a bug escapes."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from stratagate import __version__
from stratagate.storage.schema import SCHEMA_VERSION

USER_GUIDE = "docs/user-guide.md"
BUNDLED = (
    ("PySide6 (Qt for Python)", "LGPL-3.0"),
    ("pyqtgraph", "MIT"),
    ("SQLAlchemy", "MIT"),
    ("markdown-it-py", "MIT"),
    ("NumPy", "BSD-3-Clause"),
    ("PyICU with ICU", "MIT and the Unicode licence"),
    ("snowballstemmer", "BSD-3-Clause"),
    ("DejaVu fonts", "Bitstream Vera / DejaVu licence (resources/fonts/LICENSE-DejaVu.txt)"),
    ("Noto Sans CJK (subset)", "SIL Open Font License 1.1 (resources/fonts/LICENSE-NotoSansCJK.txt)"),
)


def about_text() -> str:
    licences = "".join(f"<li>{name}: {licence}</li>" for name, licence in BUNDLED)
    return (
        f"<h3>StrataGate Inspector {__version__}</h3>"
        "<p>Review, debug and curate agent memory.</p>"
        f"<p><b>Schemas read:</b> StrataGate v1–v{SCHEMA_VERSION} (v8–v12 read-only).<br/>"
        f"<b>Schemas written:</b> v5 and v6 files in their own schema, v{SCHEMA_VERSION} otherwise; "
        f"upgrading to v{SCHEMA_VERSION} only when asked (File ▸ Upgrade to schema v7…).</p>"
        f"<p><b>Bundled parts and their licences:</b><ul>{licences}</ul></p>"
        f"<p>User guide: Help ▸ User guide (<code>{USER_GUIDE}</code> in the source and the packaged app).</p>"
    )


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About StrataGate Inspector")
        self.text = QLabel(about_text(), self)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(560, 420)


class CrashDialog(QDialog):
    """An uncaught exception: the traceback, selectable to copy into a bug report. The app keeps running."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("StrataGate Inspector: unexpected error")
        message = QLabel("Something went wrong inside the app (a bug). The traceback below says where; copy it "
                         "into a bug report. Your memory was not changed by this error.", self)
        message.setWordWrap(True)
        self.traceback = QPlainTextEdit(text, self)
        self.traceback.setReadOnly(True)
        self.traceback.setAccessibleName("Traceback")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(message)
        layout.addWidget(self.traceback, 1)
        layout.addWidget(buttons)
        self.resize(720, 420)


ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]


def show_uncaught_errors(parent: QWidget) -> ExceptHook:
    """Show every uncaught exception in a `CrashDialog` (and on stderr) instead of losing it; returns the hook
    that was installed before, for tests to put back."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(kind, error, trace))
        print(text, file=sys.stderr)
        dialog = CrashDialog(text, parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    sys.excepthook = hook
    return previous
