"""CJK text is drawn with the bundled Noto Sans CJK subset, whatever CJK fonts the system has (or lacks)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontDatabase, QRawFont, QTextLayout
from PySide6.QtWidgets import QLabel

from stratagate_gui.application import CJK_FAMILY, create_application

SAMPLES = {"Han": "数据记忆", "Kana": "かなカナ", "Hangul": "한국어"}


def test_the_bundled_cjk_font_is_registered_after_dejavu_in_the_app_font(qtbot):
    app = create_application()
    assert CJK_FAMILY in QFontDatabase.families()
    families = app.font().families()
    assert families.index("DejaVu Sans") < families.index(CJK_FAMILY)
    bundled = QRawFont.fromFont(QFontDatabase.font(CJK_FAMILY, "Regular", 12))
    assert all(bundled.supportsCharacter(character) for character in "数か한")


@pytest.mark.parametrize("script", SAMPLES)
def test_a_label_draws_han_kana_and_hangul_with_glyphs_of_the_bundled_font(qtbot, script):
    create_application()
    label = QLabel(f"id {SAMPLES[script]}")
    qtbot.addWidget(label)
    label.show()
    layout = QTextLayout(label.text(), label.font())
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    # Qt splits the text into runs by the font each glyph comes from: the CJK run is the bundled font's.
    fonts = {run.rawFont().familyName() for run in layout.glyphRuns()}
    assert CJK_FAMILY in fonts
    cjk_runs = [run for run in layout.glyphRuns() if run.rawFont().familyName() == CJK_FAMILY]
    assert sum(len(run.glyphIndexes()) for run in cjk_runs) == len(SAMPLES[script])
