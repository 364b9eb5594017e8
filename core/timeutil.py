"""Timestamps the way the reference writes and reads them.

Writing: every library timestamp is `YYYY-MM-DDTHH:MM:SS.mmm+08:00` (the instant shifted to UTC+8), as the
reference's `toUtc8Iso` writes it.

Reading: `parse_js_date` is V8's `Date.parse` (stratagate.v8date): its ES5 ISO path and its legacy fallback,
for every string. One decision: a date-time written without an offset is read as **UTC**, not in the host's
local time zone, so results never depend on the machine (V8 answers the same on a machine set to TZ=UTC, where
the reference's recorded answers were made). See docs/compatibility.md.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from stratagate.errors import InvalidInputError
from stratagate.v8date import v8_date_parse

MAX_EPOCH_MS = 8.64e15  # JS Date range
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_js_date(value: str) -> int | None:
    """Epoch milliseconds for `value` as `Date.parse` reads it (offset-less date-times as UTC), or None for NaN."""
    return v8_date_parse(value)


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


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a proleptic Gregorian day number (days since 1970-01-01), any year."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day_of_year - (153 * shifted_month + 2) // 5 + 1


def to_utc8_iso(value: object | None = None) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmm+08:00` for `value` (default: now), exactly as the reference's `toUtc8Iso`
    (`toISOString` of the instant shifted by eight hours): years outside 0-9999 are written `+YYYYYY`/`-YYYYYY`,
    and an instant whose shift leaves JavaScript's range is an error, as its RangeError."""
    ms = epoch_ms(datetime.now(UTC) if value is None else value) + 8 * 3_600_000
    if abs(ms) > MAX_EPOCH_MS:
        raise InvalidInputError(f"Date out of range: {value!r}")
    days, millis = divmod(ms, 86_400_000)
    year, month, day = _civil_from_days(days)
    seconds, millis = divmod(millis, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{'-' if year < 0 else '+'}{abs(year):06d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}+08:00"


def now_utc8() -> str:
    return to_utc8_iso()
