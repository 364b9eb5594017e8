"""Light and dark themes: the Fusion style, a palette, a small style sheet, and matching plot colours."""

from __future__ import annotations

from importlib.resources import files

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

THEMES = ("light", "dark")

# Block levels L0..L5, from "title only" (cool) to "raw transcript" (warm): readable on both backgrounds.
LEVEL_COLOURS = ("#64748b", "#0ea5e9", "#14b8a6", "#84cc16", "#f59e0b", "#ef4444")


def _dark_palette() -> QPalette:
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#2b2d31",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1f2023",
        QPalette.ColorRole.AlternateBase: "#2b2d31",
        QPalette.ColorRole.ToolTipBase: "#2b2d31",
        QPalette.ColorRole.ToolTipText: "#e6e6e6",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#34363b",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Link: "#6cb6ff",
        QPalette.ColorRole.Highlight: "#3b82f6",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#8b8d92",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#7a7c80"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#7a7c80"))
    return palette


def plot_colours(theme: str) -> tuple[str, str]:
    """(background, foreground) for pyqtgraph plots."""
    return ("#1f2023", "#d4d4d8") if theme == "dark" else ("#ffffff", "#27272a")


def apply_theme(app: QApplication, theme: str) -> None:
    if theme not in THEMES:
        raise ValueError(f"unknown theme {theme!r}; expected one of {', '.join(THEMES)}")
    app.setStyle("Fusion")
    app.setPalette(_dark_palette() if theme == "dark" else app.style().standardPalette())
    app.setStyleSheet(files("stratagate_resources").joinpath("style", f"{theme}.qss").read_text())
    background, foreground = plot_colours(theme)
    # New plots pick these up; open plots are recoloured by `recolour_plots`.
    pg.setConfigOptions(background=background, foreground=foreground, antialias=True)


def recolour_plots(root: QWidget, theme: str) -> None:
    """Give every plot under `root` the theme's background and axis colours."""
    background, foreground = plot_colours(theme)
    for plot in root.findChildren(pg.PlotWidget):
        plot.setBackground(background)
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(foreground)
            axis.setTextPen(foreground)
