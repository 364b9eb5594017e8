"""Event times for the temporal axes: partial dates are ranges, unreadable values are reported."""

from __future__ import annotations

from datetime import UTC, datetime

from stratagate.model import EventTemporal
from stratagate_gui.views.temporal import event_times, parse_span


def seconds(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()


def test_partial_dates_become_ranges():
    assert parse_span("2026") == (span := parse_span("2026")) and span.start == seconds(2026, 1, 1)
    assert span.end == seconds(2027, 1, 1)
    month = parse_span("2026-03")
    assert (month.start, month.end) == (seconds(2026, 3, 1), seconds(2026, 4, 1))
    december = parse_span("2026-12")
    assert december.end == seconds(2027, 1, 1)
    day = parse_span("2026-03-02")
    assert (day.start, day.end) == (seconds(2026, 3, 2), seconds(2026, 3, 3))
    instant = parse_span("2026-03-09T21:00:00+08:00")
    assert instant.start == instant.end == seconds(2026, 3, 9, 13)


def test_dates_javascript_reads_are_plotted_where_the_engine_reads_them():
    assert parse_span("2026-02-30") == (span := parse_span("2026-02-30")) and span.start == seconds(2026, 3, 2)
    assert parse_span("Mar 9").start == seconds(2001, 3, 9)
    assert parse_span("April 1st, 2026") is None


def test_unreadable_values_are_flagged_not_dropped():
    times = event_times(EventTemporal(mentioned_at="2026-03-12T09:00:00+08:00", happened_start="earlier this month"))
    assert times.mentioned is not None and times.happened is None
    assert times.unreadable == ["happened start 'earlier this month' is not a date"]


def test_happened_range_spans_start_and_end():
    times = event_times(EventTemporal(happened_start="2026-03-10", happened_end="2026-03-11"))
    assert (times.happened.start, times.happened.end) == (seconds(2026, 3, 10), seconds(2026, 3, 12))
