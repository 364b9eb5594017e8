"""Honest plots: date axes name the month and year, and an empty plot says what to do instead of junk ticks."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter

from stratagate_gui.views.decay import NO_CURVES, NO_MEMORY
from stratagate_gui.views.elements import NO_FACTS
from stratagate_gui.views.events import NO_TIMES
from stratagate_gui.widgets.plots import empty_message
from tests.gui.test_app_views import wait_rows

DATE_LABEL = re.compile(r"^(\d{1,2} )?[A-Z][a-z]{2} \d{4}$|^\d{4}$")


def _labels(plot, start: datetime, end: datetime) -> list[str]:
    """The labels the plot's date axis draws over [start, end]."""
    plot.setXRange(start.timestamp(), end.timestamp(), padding=0)
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = plot.getAxis("bottom").generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in texts]


def _values_shown(plot) -> bool:
    return plot.getAxis("bottom").style["showValues"]


def test_the_temporal_and_validity_axes_label_months_and_years_not_only_day_numbers(opened_window, qtbot):
    window = opened_window
    window.resize(1200, 900)
    window.show()
    wait_rows(qtbot, window, window.events.model)
    window.events.select_event("evt_85")
    window.elements.element_list.setCurrentRow(0)
    window.wait_idle()
    qtbot.wait(50)  # the axes' new height (values shown again) reaches the layout
    for plot in (opened_window.events.temporal_plot, opened_window.elements.validity):
        weeks = _labels(plot, datetime(2026, 2, 20, tzinfo=UTC), datetime(2026, 3, 12, tzinfo=UTC))
        assert weeks and all(DATE_LABEL.match(label) for label in weeks), weeks
        assert "Mar 2026" in weeks and "26 Feb 2026" in weeks
        years = _labels(plot, datetime(2023, 1, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC))
        assert {"2024", "2025", "2026"} <= set(years), years


def test_empty_plots_say_what_to_do_and_show_no_tick_values(opened_window, qtbot):
    window = opened_window
    events, elements, decay = window.events, window.elements, window.decay
    events.temporal_plot.show_events([], None)
    assert empty_message(events.temporal_plot) == NO_TIMES and not _values_shown(events.temporal_plot)

    wait_rows(qtbot, window, events.model)
    events.select_event("evt_85")
    decay.show_items("event", ["evt_85"])
    elements.element_list.setCurrentRow(0)
    window.wait_idle()
    for plot in (events.temporal_plot, decay.plot, elements.validity):
        assert empty_message(plot) is None and _values_shown(plot)
    decay.item_list.item(0).setCheckState(Qt.CheckState.Unchecked)  # no curve ticked
    assert empty_message(decay.plot) == NO_CURVES and not _values_shown(decay.plot)

    window.close_memory()
    window.wait_idle()
    assert empty_message(decay.plot) == NO_MEMORY and not _values_shown(decay.plot)
    assert empty_message(elements.validity) == NO_FACTS and not _values_shown(elements.validity)

