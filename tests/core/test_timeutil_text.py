"""Timestamps parsed and written like JavaScript, and UTF-16 aware text cuts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.errors import InvalidInputError
from stratagate.text import compact, string_list, utf16_cut, utf16_length
from stratagate.timeutil import parse_js_date, to_utc8_iso
from tests.property_budget import examples


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-02", "2026-03-02T00:00:00Z"),  # date-only: UTC midnight
        ("2026-03", "2026-03-01T00:00:00Z"),
        ("2026", "2026-01-01T00:00:00Z"),
        ("2026-03-09T21:00:00+08:00", "2026-03-09T13:00:00Z"),
        ("2026-03-09T21:00:00.5Z", "2026-03-09T21:00:00.500Z"),
        ("2026-03-09T21:00", "2026-03-09T21:00:00Z"),  # no offset: UTC here (documented)
        ("2026-03-09 21:00", "2026-03-09T21:00:00Z"),
        ("2026/3/9", "2026-03-09T00:00:00Z"),
        ("March 9, 2026", "2026-03-09T00:00:00Z"),
        ("9 Mar 2026 10:00 GMT+0800", "2026-03-09T02:00:00Z"),
        ("Mon, 9 Mar 2026 10:00 UTC", "2026-03-09T10:00:00Z"),
    ],
)
def test_parse_js_date_reads_iso_and_common_forms(text, expected):
    moment = datetime.fromisoformat(expected.replace("Z", "+00:00"))
    assert parse_js_date(text) == int(moment.timestamp() * 1000)


@pytest.mark.parametrize("text", ["", "garbage", "2026-13-01", "earlier this month", "25:00"])
def test_unparsable_dates_are_none(text):
    assert parse_js_date(text) is None


# Answers of the reference's toUtc8Iso in Node 22 (TZ=UTC); None where it throws RangeError.
@pytest.mark.parametrize(("value", "written"), [
    ("Jan 1 10000", "+010000-01-01T08:00:00.000+08:00"),
    ("0000-01-01T00:00:00Z", "0000-01-01T08:00:00.000+08:00"),
    ("-000001-06-01T00:00:00Z", "-000001-06-01T08:00:00.000+08:00"),
    ("+275760-09-12T16:00:00Z", "+275760-09-13T00:00:00.000+08:00"),
    ("+275760-09-13T00:00:00Z", None),
    ("-271821-04-20T00:00:00Z", "-271821-04-20T08:00:00.000+08:00"),
    (8.64e15 - 8 * 3600000 + 1, None),
    (1.5, "1970-01-01T08:00:00.001+08:00"),
    (-1.5, "1970-01-01T07:59:59.999+08:00"),
])
def test_to_utc8_iso_covers_the_javascript_range(value, written):
    if written is None:
        with pytest.raises(InvalidInputError, match="out of range"):
            to_utc8_iso(value)
    else:
        assert to_utc8_iso(value) == written


@settings(max_examples=examples(200))
@given(st.integers(min_value=-8_640_000_000_000_000, max_value=8_640_000_000_000_000 - 8 * 3_600_000))
def test_every_written_instant_reads_back(ms):
    assert parse_js_date(to_utc8_iso(ms)) == ms


def test_to_utc8_iso_matches_the_reference():
    assert to_utc8_iso("2026-08-20T00:00:00.000Z") == "2026-08-20T08:00:00.000+08:00"
    assert to_utc8_iso(0) == "1970-01-01T08:00:00.000+08:00"
    assert to_utc8_iso(datetime(2026, 3, 2, 1, tzinfo=UTC)) == "2026-03-02T09:00:00.000+08:00"
    for bad in ("nope", float("nan"), True, object(), 9e15):
        with pytest.raises(InvalidInputError):
            to_utc8_iso(bad)


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9000, 1, 1), timezones=st.just(UTC)))
def test_written_timestamps_read_back_to_the_same_millisecond(moment):
    written = to_utc8_iso(moment)
    assert parse_js_date(written) == (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def test_utf16_cuts_count_code_units_and_never_split_pairs():
    assert utf16_length("a😀b") == 4
    assert utf16_cut("a😀b", 2) == "a"  # JS would leave half of the emoji
    assert utf16_cut("a😀b", 3) == "a😀"
    assert utf16_cut("abc", 5) == "abc"
    assert compact("  a \n b  ", 10) == "a b" and compact(5, 10) == ""
    assert string_list(["x", " x ", "X", "", 3, "y"], 3) == ["x", "X", "y"]
