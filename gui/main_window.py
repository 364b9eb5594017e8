"""The main window: menus, docks and the central views."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("StrataGate Inspector")
        self.setCentralWidget(QLabel("StrataGate Inspector"))
