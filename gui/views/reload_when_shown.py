"""Views that re-read on a change at once when shown, else the next time they are shown, so a write
costs nothing in tabs nobody is looking at."""

from __future__ import annotations

from PySide6.QtGui import QShowEvent


class ReloadWhenShown:
    """Mix into a QWidget (before it in the bases) that has a `reload()`."""

    _stale = False

    def reload_when_shown(self) -> None:
        if self.isVisible():  # type: ignore[attr-defined]
            self.reload()  # type: ignore[attr-defined]
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)  # type: ignore[misc]
        if self._stale:
            self._stale = False
            self.reload()  # type: ignore[attr-defined]
