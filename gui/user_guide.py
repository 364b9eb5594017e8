"""Help ▸ User guide: docs/user-guide.md shown inside the app, with its screenshots, from the source tree or
from the packaged bundle (which carries docs/), so it needs neither a network nor a Markdown viewer."""

from __future__ import annotations

import sys
from pathlib import Path

from markdown_it import MarkdownIt
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

GUIDE = Path("docs") / "user-guide.md"


def user_guide_path() -> Path:
    """The bundle keeps docs/ beside the packages; a source checkout has it above gui/."""
    root = Path(sys._MEIPASS) if getattr(sys, "frozen", False) else Path(__file__).resolve().parents[1]
    return root / GUIDE


class UserGuideDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, guide: Path | None = None) -> None:
        super().__init__(parent)
        guide = guide or user_guide_path()
        self.setWindowTitle("StrataGate Inspector: user guide")
        self.browser = QTextBrowser(self)
        self.browser.setAccessibleName("User guide")
        self.browser.setOpenExternalLinks(True)
        try:
            text = guide.read_text(encoding="utf-8")
        except OSError as error:
            self.browser.setPlainText(f"The user guide is not readable at {guide}: {error.strerror}.")
        else:
            # Our own document, so raw HTML is fine; relative image paths resolve against docs/.
            self.browser.document().setBaseUrl(QUrl.fromLocalFile(f"{guide.parent}/"))
            self.browser.setHtml(MarkdownIt("commonmark").enable("table").render(text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(900, 700)
