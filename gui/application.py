"""Build the QApplication, the main window, and run the event loop (or the self-test)."""

from __future__ import annotations

import argparse
import os
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QFontDatabase, QIcon
from PySide6.QtWidgets import QApplication

from stratagate import __version__
from stratagate_gui.about import show_uncaught_errors
from stratagate_gui.opening import describe_open_error
from stratagate_gui.theme import THEMES, apply_theme

if TYPE_CHECKING:
    from stratagate_gui.inspector import InspectorWindow
    from stratagate_gui.main_window import MainWindow


CJK_FAMILY = "Noto Sans CJK JP"
"""The bundled subset of Noto Sans CJK (resources/fonts, made by packaging/subset_cjk_font.py)."""


def load_bundled_fonts(app: QApplication) -> None:
    """The offscreen platform sees few system fonts; the bundled DejaVu keeps text legible everywhere, and
    the bundled CJK subset draws Han, Kana and Hangul the same on every machine instead of whatever CJK font
    (if any) the system has."""
    for font in files("stratagate_resources").joinpath("fonts").iterdir():
        if font.name.endswith((".ttf", ".otf")):
            QFontDatabase.addApplicationFont(str(font))
    # Qt tries the families in order for each character: Latin from the usual font or DejaVu, CJK from ours.
    font = app.font()
    font.setFamilies([font.family(), "DejaVu Sans", CJK_FAMILY])
    app.setFont(font)


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
    load_bundled_fonts(app)
    return app


def demo_database_path() -> Path:
    """Where the bundled demo memory is built on first use (the XDG cache directory)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    # Versioned, so an upgraded app builds the demo from its own script instead of reusing an older one.
    return cache / "stratagate-inspector" / f"demo-{__version__}.sqlite"


def ensure_demo_database() -> Path:
    from stratagate.demo import build_demo_database

    path = demo_database_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Built beside it and renamed into place: an interrupted build never leaves a half demo to reuse.
        partial = path.with_name(f"{path.name}.partial")
        build_demo_database(partial, overwrite=True)
        os.replace(partial, path)
    return path


def build_main_window(settings: QSettings | None = None) -> InspectorWindow:
    """The main window with every feature mounted, in the saved theme, with File ▸ Open demo memory."""
    from stratagate_gui.inspector import InspectorWindow

    settings = settings or QSettings()
    theme = str(settings.value("theme", "light"))
    theme = theme if theme in THEMES else "light"
    apply_theme(QApplication.instance(), theme)
    window = InspectorWindow(settings, theme)
    demo_action = QAction("Open &demo memory", window)
    demo_action.triggered.connect(lambda _checked=False: open_demo(window))
    window.file_menu.insertAction(window.recent_menu.menuAction(), demo_action)
    live_action = QAction("Watch a &live agent (demo)", window)
    live_action.triggered.connect(lambda _checked=False: start_live_demo(window))
    window.file_menu.insertAction(window.recent_menu.menuAction(), live_action)
    return window


def start_live_demo(window: InspectorWindow) -> None:
    from stratagate_gui.live_demo import start_live_demo as start

    start(window)


def open_demo(window: MainWindow, namespace: str | None = None, read_only: bool = False) -> None:
    """Build the demo memory on the worker if it is not cached yet, then open it."""
    window.worker.run(
        ensure_demo_database,
        on_done=lambda path: window.open_location(str(path), namespace, read_only=read_only),
        on_error=lambda error: window.writes.show_error(
            "Cannot open the demo memory", f"Building {demo_database_path()} failed.\n\n{describe_open_error(error)}"
        ),
    )


def open_from_arguments(window: MainWindow, arguments: argparse.Namespace) -> None:
    """Open what the command line names: a database, or the demo (--demo, and always for --self-test)."""
    if arguments.demo and arguments.live:
        start_live_demo(window)
    elif arguments.demo or arguments.self_test:
        open_demo(window, arguments.namespace, arguments.read_only)
    elif arguments.database:
        window.open_location(arguments.database, arguments.namespace, read_only=arguments.read_only)


def run(arguments: argparse.Namespace) -> int:
    app = create_application()
    window = build_main_window()
    screen = window.screen().availableGeometry()
    window.resize(min(1280, screen.width()), min(800, screen.height()))
    window.show()
    window.writes.errors_to_stderr = bool(arguments.self_test)
    if not arguments.self_test:
        show_uncaught_errors(window)
    open_from_arguments(window, arguments)
    if arguments.self_test:
        return self_test(window, arguments.self_test)
    try:
        return app.exec()
    finally:
        from stratagate_gui.live_demo import stop_live_demo

        stop_live_demo(window)


def self_test(window: InspectorWindow, output: Path) -> int:
    """Open the demo, show every view once (so each loads and draws), and save the window to `output`."""
    window.wait_idle()
    if window.memory is None:
        window.close()
        return 1
    window.events.table.selectRow(0)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        window.wait_idle()
    window.tabs.setCurrentIndex(0)
    window.wait_idle()
    saved = window.grab().save(str(output))
    window.close()
    return 0 if saved else 1
