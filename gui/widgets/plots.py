"""Plot helpers: a date axis whose labels name the month and year, and an empty state that says what to do."""

from __future__ import annotations

from collections import OrderedDict

import pyqtgraph as pg
from pyqtgraph.graphicsItems.DateAxisItem import (
    DAY_SPACING,
    HMS_ZOOM_LEVEL,
    HOUR_SPACING,
    MINUTE_SPACING,
    MONTH_SPACING,
    MS_ZOOM_LEVEL,
    YEAR_SPACING,
    TickSpec,
    ZoomLevel,
    makeMStepper,
    makeSStepper,
    makeYStepper,
)

EMPTY_COLOUR = "#6b7280"
EMPTY_MESSAGE = "emptyMessage"

# pyqtgraph's own levels label a day tick "12" or "Mon 12": without the month and year a reviewer cannot
# tell which month a fact or event sits in. Every day tick here names its month and year.
_YEARS = ZoomLevel(
    [
        TickSpec(YEAR_SPACING, makeYStepper(1), "%Y", autoSkip=[1, 5, 10, 25]),
        TickSpec(MONTH_SPACING, makeMStepper(1), "%b %Y"),
    ],
    "MMM 0000",
)
_MONTHS = ZoomLevel(
    [
        TickSpec(MONTH_SPACING, makeMStepper(1), "%b %Y"),
        TickSpec(DAY_SPACING, makeSStepper(DAY_SPACING), "%d %b %Y", autoSkip=[1, 5]),
    ],
    "00 MMM 0000",
)
_DAYS = ZoomLevel(
    [
        TickSpec(DAY_SPACING, makeSStepper(DAY_SPACING), "%d %b %Y"),
        TickSpec(HOUR_SPACING, makeSStepper(HOUR_SPACING), "%H:%M", autoSkip=[1, 6]),
    ],
    "00 MMM 0000",
)
_HOURS = ZoomLevel(
    [
        TickSpec(DAY_SPACING, makeSStepper(DAY_SPACING), "%d %b %Y"),
        TickSpec(MINUTE_SPACING, makeSStepper(MINUTE_SPACING), "%H:%M", autoSkip=[1, 5, 15]),
    ],
    "00 MMM 0000",
)


class CalendarAxis(pg.DateAxisItem):
    """A UTC date axis (the app shows times in UTC) labelling days as "12 Mar 2026", months as "Mar 2026"."""

    def __init__(self, orientation: str = "bottom") -> None:
        super().__init__(orientation=orientation, utcOffset=0)
        self.zoomLevels = OrderedDict(
            [
                (float("inf"), _YEARS),
                (5 * 86_400, _MONTHS),
                (6 * 3_600, _DAYS),
                (15 * 60, _HOURS),
                (30, HMS_ZOOM_LEVEL),
                (1, MS_ZOOM_LEVEL),
            ]
        )


def show_empty(plot: pg.PlotWidget, message: str) -> None:
    """An empty plot says what to do instead of showing a grid with meaningless ticks ("0.250")."""
    plot.clear()
    for name in ("bottom", "left"):
        plot.getAxis(name).setStyle(showValues=False)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)
    text = pg.TextItem(message, color=EMPTY_COLOUR, anchor=(0.5, 0.5))
    text.setPos(0.5, 0.5)
    text.setObjectName(EMPTY_MESSAGE)
    plot.addItem(text)


def show_values(plot: pg.PlotWidget) -> None:
    """Back from the empty state (after the caller's `clear()`): the axes show their values again."""
    for name in ("bottom", "left"):
        plot.getAxis(name).setStyle(showValues=True)


def empty_message(plot: pg.PlotWidget) -> str | None:
    """The what-to-do message the plot shows, or None when it shows data."""
    for item in plot.getPlotItem().items:
        if isinstance(item, pg.TextItem) and item.objectName() == EMPTY_MESSAGE:
            return item.toPlainText()
    return None
