"""Render resources/icons/stratagate-inspector.svg to the PNG sizes the app and the desktop entry use.

Run after editing the SVG: `QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icon.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SVG = ICONS / "stratagate-inspector.svg"
SIZES = (256, 64)


def render(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    _app = QGuiApplication(sys.argv)
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"render_icon: {SVG} is not a valid SVG", file=sys.stderr)
        return 1
    for size in SIZES:
        out = ICONS / f"stratagate-inspector-{size}.png"
        if not render(renderer, size).save(str(out)):
            print(f"render_icon: could not write {out}", file=sys.stderr)
            return 1
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
