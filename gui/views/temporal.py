"""Reading event times for plotting: partial dates become ranges, unreadable ones are reported, not dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from stratagate.model import EventTemporal
from stratagate.timeutil import parse_js_date

_YEAR = re.compile(r"^(\d{4})$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


@dataclass(frozen=True)
class TimeSpan:
    """[start, end] in epoch seconds; an instant has start == end."""

    start: float
    end: float


def _seconds(moment: datetime) -> float:
    return moment.timestamp()


def parse_span(text: str | None) -> TimeSpan | None:
    """"2026" → the whole year, "2026-03" → the month, "2026-03-02" → the day, a date-time → an instant."""
    if not text:
        return None
    value = text.strip()
    try:
        if match := _YEAR.match(value):
            year = int(match[1])
            return TimeSpan(_seconds(datetime(year, 1, 1, tzinfo=UTC)), _seconds(datetime(year + 1, 1, 1, tzinfo=UTC)))
        if match := _MONTH.match(value):
            year, month = int(match[1]), int(match[2])
            following = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            return TimeSpan(_seconds(datetime(year, month, 1, tzinfo=UTC)), _seconds(following))
        if match := _DAY.match(value):
            start = _seconds(datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=UTC))
            return TimeSpan(start, start + 86_400)
    except ValueError:
        pass  # not a calendar date (2026-02-30), but JavaScript reads it (as March 2): so does the engine
    milliseconds = parse_js_date(value)
    return None if milliseconds is None else TimeSpan(milliseconds / 1000, milliseconds / 1000)


@dataclass
class EventTimes:
    mentioned: TimeSpan | None
    happened: TimeSpan | None
    unreadable: list[str]
    """Human-readable notes for each value that is present but could not be read as a date."""


def event_times(temporal: EventTemporal) -> EventTimes:
    unreadable: list[str] = []

    def read(label: str, value: str | None) -> TimeSpan | None:
        span = parse_span(value)
        if value and span is None:
            unreadable.append(f"{label} {value!r} is not a date")
        return span

    mentioned = read("mentioned at", temporal.mentioned_at)
    start = read("happened start", temporal.happened_start)
    end = read("happened end", temporal.happened_end)
    happened = None
    if start and end:
        happened = TimeSpan(min(start.start, end.start), max(start.end, end.end))
    else:
        happened = start or end
    return EventTimes(mentioned, happened, unreadable)


def happened_text(temporal: EventTemporal) -> str:
    start, end = temporal.happened_start, temporal.happened_end
    if start and end and start != end:
        return f"{start} – {end}"
    return start or end or ""
