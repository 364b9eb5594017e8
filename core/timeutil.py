"""Timestamps the way the reference writes and reads them.

Writing: every library timestamp is `YYYY-MM-DDTHH:MM:SS.mmm+08:00` (the instant shifted to UTC+8), as the
reference's `toUtc8Iso` writes it.

Reading: `parse_js_date` follows JavaScript's `Date.parse` for the forms agent memories contain: the ISO
date-time format (date-only and year-month forms are UTC midnight; `Z` or `±HH:MM` offsets) plus the common
lenient forms V8 accepts (`2026-03-09 21:00`, `2026/03/09`, `March 9, 2026`, `9 Mar 2026 10:00 GMT+0800`).
One deliberate difference: a date-time written without an offset is read as **UTC**, not in the host's local
time zone, so results never depend on the machine (the reference fixtures were made with TZ=UTC, where the two
agree). See docs/compatibility.md.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta

from stratagate.errors import InvalidInputError

UTC8 = timedelta(hours=8)
MAX_EPOCH_MS = 8.64e15  # JS Date range
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MS = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1) + 8 * 3600 * 1000
_MAX_MS = (datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1) - 8 * 3600 * 1000

_ISO = re.compile(
    r"^(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:T(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2})?)?$"
)
_SPACED = re.compile(
    r"^(?P<year>\d{4})[-/](?P<month>\d{1,2})[-/](?P<day>\d{1,2})"
    r"(?:[ T]+(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?)?"
    r"\s*(?P<zone>Z|UTC|GMT|(?:GMT|UTC)?[+-]\d{2}:?\d{2})?$",
    re.I,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
         ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"),
         ("nov", "november"), ("dec", "december")),
        start=1,
    )
    for name in names
}
_WEEKDAY = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?"
_TIME_AND_ZONE = (
    r"(?:\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?"
    r"\s*(?P<zone>Z|UTC|GMT|(?:GMT|UTC)?[+-]\d{2}:?\d{2})?$"
)
_MONTH_FIRST = re.compile(
    _WEEKDAY + r"(?P<monthname>[a-z]+)\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>\d{4})" + _TIME_AND_ZONE, re.I
)
_DAY_FIRST = re.compile(
    _WEEKDAY + r"(?P<day>\d{1,2})\s+(?P<monthname>[a-z]+)\.?,?\s+(?P<year>\d{4})" + _TIME_AND_ZONE, re.I
)


def _zone_offset_minutes(zone: str | None) -> int:
    if not zone or zone.upper() in ("Z", "UTC", "GMT"):
        return 0
    digits = zone.upper().removeprefix("GMT").removeprefix("UTC")
    sign = -1 if digits[0] == "-" else 1
    digits = digits[1:].replace(":", "")
    return sign * (int(digits[:2]) * 60 + int(digits[2:]))


def _to_epoch_ms(year: int, month: int, day: int, hour: int, minute: int, second: int, millis: int,
                 offset_minutes: int) -> int | None:
    try:
        base = date(year, month, day)
    except ValueError:
        return None
    if hour == 24 and minute == second == millis == 0:
        hour, base = 0, base + timedelta(days=1)
    if hour > 23 or minute > 59 or second > 59:
        return None
    days = (base - date(1970, 1, 1)).days
    return ((days * 24 + hour) * 60 + minute - offset_minutes) * 60_000 + second * 1000 + millis


def _from_match(match: re.Match[str], month: int | None = None) -> int | None:
    parts = match.groupdict()
    year = int(parts["year"])
    if parts["year"] in ("-000000",):
        return None
    month = month if month is not None else int(parts.get("month") or 1)
    day = int(parts.get("day") or 1)
    hour = int(parts.get("hour") or 0)
    minute = int(parts.get("minute") or 0)
    second = int(parts.get("second") or 0)
    fraction = (parts.get("fraction") or "").ljust(3, "0")[:3]
    if not 1 <= year <= 9999:
        return None
    return _to_epoch_ms(year, month, day, hour, minute, second, int(fraction), _zone_offset_minutes(parts.get("zone")))


def parse_js_date(value: str) -> int | None:
    """Epoch milliseconds for `value` as `Date.parse` reads it (offset-less date-times as UTC), or None."""
    text = value.strip()
    if not text:
        return None
    for pattern in (_ISO, _SPACED):
        match = pattern.match(text)
        if match:
            return _from_match(match)
    for pattern in (_MONTH_FIRST, _DAY_FIRST):
        match = pattern.match(text)
        if match:
            month = _MONTHS.get(match.group("monthname").lower())
            return _from_match(match, month) if month else None
    return None


def epoch_ms(value: object) -> int:
    """Epoch milliseconds of a datetime, an ISO/JS date string or epoch milliseconds; InvalidInputError else."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return (moment - _EPOCH) // timedelta(milliseconds=1)
    if isinstance(value, bool):
        raise InvalidInputError(f"Invalid date: {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > MAX_EPOCH_MS:
            raise InvalidInputError(f"Invalid date: {value!r}")
        return int(value)
    if isinstance(value, str):
        parsed = parse_js_date(value)
        if parsed is None:
            raise InvalidInputError(f"Invalid date: {value[:80]!r}")
        return parsed
    raise InvalidInputError(f"Invalid date: expected a datetime, string or epoch milliseconds, got {type(value).__name__}")


def to_utc8_iso(value: object | None = None) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmm+08:00` for `value` (default: now), like the reference's `toUtc8Iso`."""
    ms = epoch_ms(datetime.now(UTC) if value is None else value)
    if not _MIN_MS <= ms <= _MAX_MS:
        raise InvalidInputError(f"Date out of supported range (years 1-9999): {value!r}")
    shifted = _EPOCH + timedelta(milliseconds=ms) + UTC8
    return shifted.strftime("%Y-%m-%dT%H:%M:%S.") + f"{shifted.microsecond // 1000:03d}+08:00"


def now_utc8() -> str:
    return to_utc8_iso()
