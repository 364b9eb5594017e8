"""Build the QApplication, the main window, and run the event loop (or the self-test)."""

from __future__ import annotations

import argparse
from importlib.resources import files

from PySide6.QtGui import QFontDatabase, QIcon
from PySide6.QtWidgets import QApplication

from stratagate import __version__


def load_bundled_fonts() -> None:
    """The offscreen platform sees few system fonts; the bundled DejaVu keeps text legible everywhere."""
    for font in files("stratagate_resources").joinpath("fonts").iterdir():
        if font.name.endswith(".ttf"):
            QFontDatabase.addApplicationFont(str(font))


def application_icon() -> QIcon:
    """The strata-and-magnifier icon, at the sizes rendered from resources/icons/stratagate-inspector.svg."""
    icon = QIcon()
    for size in (64, 256):
        icon.addFile(str(files("stratagate_resources").joinpath(f"icons/stratagate-inspector-{size}.png")))
    return icon


def create_application(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv or ["stratagate-inspector"])
    app.setApplicationName("StrataGate Inspector")
    app.setOrganizationName("StrataGate")
    app.setApplicationVersion(__version__)
    app.setWindowIcon(application_icon())
    # Lets the desktop match windows to packaging/stratagate-inspector.desktop (taskbar icon, grouping).
    app.setDesktopFileName("stratagate-inspector")
    load_bundled_fonts()
    return app


def run(arguments: argparse.Namespace) -> int:
    from stratagate_gui.main_window import MainWindow

    app = create_application()
    window = MainWindow()
    window.resize(1280, 800)
    window.show()
    if arguments.self_test:
        app.processEvents()
        saved = window.grab().save(str(arguments.self_test))
        window.close()
        return 0 if saved else 1
    return app.exec()
