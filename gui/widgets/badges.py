"""The badge that says how the memory is opened: writable, read-only, or forensic (hashed, never written)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget


class OpenModeBadge(QLabel):
    """Shows "READ-ONLY" or "WRITABLE" and, for files, the sha256 taken when the file was opened."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("openModeBadge")
        self.show_closed()

    def show_closed(self) -> None:
        self._set("closed", "no memory open", "")

    def show_memory(self, read_only: bool, file_sha256: str | None, notice: str | None) -> None:
        parts = ["READ-ONLY · FORENSIC" if read_only else "WRITABLE"]
        if file_sha256:
            parts.append(f"sha256 {file_sha256[:12]}…")
        tooltip = [f"sha256 of the file when opened: {file_sha256}"] if file_sha256 else []
        if notice:
            parts.append("⚠")
            tooltip.append(notice)
        self._set("readOnly" if read_only else "writable", "  ".join(parts), "\n".join(tooltip))

    def _set(self, mode: str, text: str, tooltip: str) -> None:
        self.setProperty("mode", mode)
        self.setText(text)
        self.setToolTip(tooltip)
        # Re-evaluate the style sheet rules that select on the "mode" property.
        self.style().unpolish(self)
        self.style().polish(self)
