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

UTC8 = timedelta(hours=8)
MAX_EPOCH_MS = 8.64e15  # JS Date range
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MS = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1) + 8 * 3600 * 1000
_MAX_MS = (datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1) - 8 * 3600 * 1000


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


def to_utc8_iso(value: object | None = None) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmm+08:00` for `value` (default: now), like the reference's `toUtc8Iso`."""
    ms = epoch_ms(datetime.now(UTC) if value is None else value)
    if not _MIN_MS <= ms <= _MAX_MS:
        raise InvalidInputError(f"Date out of supported range (years 1-9999): {value!r}")
    shifted = _EPOCH + timedelta(milliseconds=ms) + UTC8
    return shifted.strftime("%Y-%m-%dT%H:%M:%S.") + f"{shifted.microsecond // 1000:03d}+08:00"


def now_utc8() -> str:
    return to_utc8_iso()
