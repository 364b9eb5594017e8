"""`Date.parse` as V8 (Node 22) answers it, on a machine whose time zone is UTC.

V8 reads a string in two passes over one token stream:

1. **The ES5 ISO path**: `[+-yyyyyy|yyyy][-MM[-DD]][THH:mm[:ss[.s+]][Z|+-hh:mm|+-hhmm]]`. A string that is this
   and nothing else is an ISO date (date-only forms are UTC; date-times without an offset are local time). Once a
   `T` is read, anything unexpected makes the string invalid.
2. **The legacy fallback** continues from the first token the ISO path could not use: numbers followed by `:` or
   `.` build a time; other numbers are date components; a word whose first three letters name a month sets the
   month; `am`/`pm` after a time shift the hour; `UT`/`UTC`/`GMT`/`Z` and the US zones (`EST` …) set an offset,
   as does a sign after a zone or a time (`+hh:`, `+h`, `+hh`, `+hhmm`); parenthesised text is skipped; unknown
   words are skipped only before the first number. Date components are then read as year-month-day when the
   first is not a possible day (or it was an ISO date), else month-day-year (or with a named month: day-year or
   year-day); missing components are 1, so the default year is 1 → 2001; years 0–49 are 20xx and 50–99 19xx.

Days are not checked against the month (1–31 is enough): `2026-02-30` is March 2. The result is clipped to
JavaScript's time range (±8.64e15 ms).

**Local time is UTC here**: JavaScript reads an offset-less date-time in the host's time zone; the engine reads it
as UTC so results never depend on the machine (the reference's recorded answers were made with TZ=UTC). See
docs/compatibility.md. Checked against answers recorded from Node 22 (`tests/fixtures/v8-date-parse.json`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

MAX_TIME_MS = 8.64e15  # TimeClip: JS dates are within ±1e8 days of the epoch
# Local times may be up to ten days beyond the range before their offset is applied (V8's DateCache).
_MAX_LOCAL_MS = MAX_TIME_MS + 864_000_000
_MAX_YEAR = 1_000_000  # V8's MakeDay refuses years beyond ±1e6
_SMI_MAX = 2**31 - 1  # an offset in seconds must fit V8's small integer
_MAX_DIGITS = 9  # V8 keeps the first nine significant digits of a numeral and skips the rest

# JavaScript's WhiteSpace (not line terminators): these end a word even though they are >= 'A'.
_WORD_BREAKING_SPACE = frozenset("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                                 "\u200a\u202f\u205f\u3000\ufeff")
JS_WHITESPACE = "\t\n\v\f\r \u2028\u2029" + "".join(sorted(_WORD_BREAKING_SPACE))
"""What JavaScript's `trim` removes: WhiteSpace and LineTerminator."""
_SPACE = frozenset(JS_WHITESPACE)


class Kind(Enum):
    NUMBER = "number"
    SYMBOL = "symbol"  # one of : - + . )
    WORD = "word"
    SPACE = "space"
    UNKNOWN = "unknown"  # any other character, or a parenthesised comment
    END = "end"


class Word(Enum):
    INVALID = "invalid"
    MONTH = "month"
    ZONE = "zone"
    TIME_SEPARATOR = "T"
    AM_PM = "ampm"


@dataclass(frozen=True)
class Token:
    kind: Kind
    value: int | str = 0  # a number's value, a symbol's character, a word keyword's value
    length: int = 0  # characters in a number or word
    word: Word | None = None

    def is_symbol(self, character: str) -> bool:
        return self.kind is Kind.SYMBOL and self.value == character

    def is_sign(self) -> bool:
        return self.is_symbol("+") or self.is_symbol("-")

    def is_number(self, length: int | None = None) -> bool:
        return self.kind is Kind.NUMBER and (length is None or self.length == length)

    def is_z(self) -> bool:
        return self.word is Word.ZONE and self.length == 1 and self.value == 0


_END = Token(Kind.END)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ZONES = {"ut": 0, "utc": 0, "z": 0, "gmt": 0, "cdt": -5, "cst": -6, "edt": -4, "est": -5, "mdt": -6, "mst": -7,
          "pdt": -7, "pst": -8}
_PLAIN_ISO = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?",
    re.ASCII,
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _numeral(digits: str) -> int:
    """A numeral's value from its first nine significant digits (leading zeros are not significant)."""
    return int(digits.lstrip("0")[:_MAX_DIGITS] or "0")


def _keyword(word: str) -> Token:
    """A word token: months match on their first three letters (any longer word too), the rest exactly."""
    lower = word.translate(_ASCII_LOWER)
    length = len(word)
    if length >= 3 and lower[:3] in _MONTHS:
        return Token(Kind.WORD, _MONTHS.index(lower[:3]) + 1, length, Word.MONTH)
    if lower in ("am", "pm"):
        return Token(Kind.WORD, 0 if lower == "am" else 12, length, Word.AM_PM)
    if lower in _ZONES:
        return Token(Kind.WORD, _ZONES[lower], length, Word.ZONE)
    if lower == "t":
        return Token(Kind.WORD, 0, length, Word.TIME_SEPARATOR)
    return Token(Kind.WORD, 0, length, Word.INVALID)


def _tokens(text: str) -> list[Token]:
    """V8's date tokenizer over `text` (which ends at its first NUL, as V8 reads a 0 character as the end)."""
    text = text.split("\0", 1)[0]
    tokens: list[Token] = []
    position, size = 0, len(text)
    while position < size:
        character = text[position]
        start = position
        if "0" <= character <= "9":
            while position < size and "0" <= text[position] <= "9":
                position += 1
            tokens.append(Token(Kind.NUMBER, _numeral(text[start:position]), position - start))
        elif character in ":-+.)":
            position += 1
            tokens.append(Token(Kind.SYMBOL, character, 1))
        elif character >= "A" and character not in _WORD_BREAKING_SPACE:
            while position < size and text[position] >= "A" and text[position] not in _WORD_BREAKING_SPACE:
                position += 1
            tokens.append(_keyword(text[start:position]))
        elif character in _SPACE:
            position += 1
            tokens.append(Token(Kind.SPACE, 0, 1))
        elif character == "(":
            depth = 0
            while True:
                depth += {"(": 1, ")": -1}.get(text[position], 0)
                position += 1
                if depth <= 0 or position >= size:
                    break
            tokens.append(Token(Kind.UNKNOWN))
        else:
            position += 1
            tokens.append(Token(Kind.UNKNOWN))
    return tokens


class _Scanner:
    """The token stream with one token of look-ahead."""

    def __init__(self, text: str):
        self._tokens = _tokens(text)
        self._index = 0

    def peek(self) -> Token:
        return self._tokens[self._index] if self._index < len(self._tokens) else _END

    def next(self) -> Token:
        token = self.peek()
        self._index += 1
        return token

    def skip_symbol(self, character: str) -> bool:
        if self.peek().is_symbol(character):
            self._index += 1
            return True
        return False


def _is_minute(n: int) -> bool:
    return 0 <= n <= 59


def _is_hour(n: int) -> bool:
    return 0 <= n <= 23


def _is_month(n: int) -> bool:
    return 1 <= n <= 12


def _is_day(n: int) -> bool:
    return 1 <= n <= 31


@dataclass
class _Day:
    parts: list[int] = field(default_factory=list)
    named_month: int | None = None
    iso: bool = False

    def add(self, n: int) -> bool:
        if len(self.parts) >= 3:
            return False
        self.parts.append(n)
        return True

    def resolve(self) -> tuple[int, int, int] | None:
        """(year, month 1-12, day 1-31) from the components read, or None."""
        if not self.parts:
            return None
        first, second, third = (self.parts + [1, 1])[:3]
        if self.named_month is None:
            if self.iso or not _is_day(first):
                year, month, day = first, second, third
            else:
                month, day, year = first, second, third
        else:
            month = self.named_month
            year, day = (first, second) if not _is_day(first) else (second, first)
        if not self.iso:
            year += 2000 if 0 <= year <= 49 else 1900 if 50 <= year <= 99 else 0
        if not (_is_month(month) and _is_day(day)):
            return None
        return year, month, day


@dataclass
class _Time:
    parts: list[int] = field(default_factory=list)
    hour_offset: int | None = None

    def add(self, n: int) -> bool:
        if len(self.parts) >= 4:
            return False
        self.parts.append(n)
        return True

    def add_final(self, n: int) -> bool:
        if not self.add(n):
            return False
        self.parts += [0] * (4 - len(self.parts))
        return True

    def is_expecting(self, n: int) -> bool:
        index = len(self.parts)
        return (index == 1 and _is_minute(n)) or (index == 2 and _is_minute(n)) or (index == 3 and 0 <= n <= 999)

    def resolve(self) -> tuple[int, int, int, int] | None:
        hour, minute, second, millis = (self.parts + [0, 0, 0, 0])[:4]
        if self.hour_offset is not None:
            if not 0 <= hour <= 12:
                return None
            hour = hour % 12 + self.hour_offset
        if not (_is_hour(hour) and _is_minute(minute) and _is_minute(second) and 0 <= millis <= 999) and (
                hour, minute, second, millis) != (24, 0, 0, 0):
            return None
        return hour, minute, second, millis


@dataclass
class _Zone:
    sign: int | None = None
    hour: int | None = None
    minute: int | None = None

    def set(self, offset_hours: int) -> None:
        self.sign = -1 if offset_hours < 0 else 1
        self.hour = abs(offset_hours)
        self.minute = 0

    def is_expecting(self, n: int) -> bool:
        return self.hour is not None and self.minute is None and _is_minute(n)

    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    def resolve(self) -> int | None | bool:
        """The offset in seconds, None when no zone was given, False when it cannot be represented."""
        if self.sign is None:
            return None
        # V8 computes this in 32-bit unsigned arithmetic, so a huge hour wraps around.
        seconds = ((self.hour or 0) * 3600 + (self.minute or 0) * 60) % 2**32
        if seconds > _SMI_MAX:
            return False
        return self.sign * seconds


def _milliseconds(token: Token) -> int:
    """The first three significant digits of a fraction, from its value and its number of digits."""
    length = min(token.length, _MAX_DIGITS)
    number = int(token.value)
    return _scaled_ms(number, length)


def _fraction_ms(digits: str) -> int:
    return _scaled_ms(_numeral(digits), min(len(digits), _MAX_DIGITS))


def _scaled_ms(number: int, length: int) -> int:
    """Milliseconds from a fraction's value and its number of digits (at most nine counted)."""
    if length < 3:
        return number * (100 if length == 1 else 10)
    return number // 10 ** (length - 3)


def _iso(scanner: _Scanner, day: _Day, time: _Time, zone: _Zone) -> Token | None:
    """The ES5 ISO pass: the token the legacy pass continues with (END when done), or None for invalid."""
    if scanner.peek().is_sign():
        sign_token = scanner.next()
        if not scanner.peek().is_number(6):
            return sign_token
        year = int(scanner.next().value)
        if sign_token.value == "-" and year == 0:
            return sign_token
        day.add(-year if sign_token.value == "-" else year)
    elif scanner.peek().is_number(4):
        day.add(int(scanner.next().value))
    else:
        return scanner.next()
    if scanner.skip_symbol("-"):
        if not (scanner.peek().is_number(2) and _is_month(int(scanner.peek().value))):
            return scanner.next()
        day.add(int(scanner.next().value))
        if scanner.skip_symbol("-"):
            if not (scanner.peek().is_number(2) and _is_day(int(scanner.peek().value))):
                return scanner.next()
            day.add(int(scanner.next().value))
    if scanner.peek().word is not Word.TIME_SEPARATOR:
        if scanner.peek().kind is not Kind.END:
            return scanner.next()
    elif not _iso_time(scanner, time, zone):
        return None
    if zone.hour is None and not time.parts:
        zone.set(0)  # date-only forms are UTC
    day.iso = True
    return _END


def _iso_clock_part(scanner: _Scanner, time: _Time, hour_is_24: bool) -> bool:
    """Two-digit minutes or seconds (0-59; only 00 after hour 24)."""
    peek = scanner.peek()
    if not (peek.is_number(2) and _is_minute(int(peek.value))) or (hour_is_24 and int(peek.value) > 0):
        return False
    time.add(int(scanner.next().value))
    return True


def _iso_time(scanner: _Scanner, time: _Time, zone: _Zone) -> bool:
    """`THH:mm[:ss[.s+]][Z|+-hh:mm|+-hhmm]` up to the end of the input."""
    scanner.next()
    if not (scanner.peek().is_number(2) and 0 <= int(scanner.peek().value) <= 24):
        return False
    hour_is_24 = scanner.peek().value == 24
    time.add(int(scanner.next().value))
    if not scanner.skip_symbol(":") or not _iso_clock_part(scanner, time, hour_is_24):
        return False
    if scanner.skip_symbol(":"):
        if not _iso_clock_part(scanner, time, hour_is_24):
            return False
        if scanner.skip_symbol("."):
            if not scanner.peek().is_number() or (hour_is_24 and int(scanner.peek().value) > 0):
                return False
            time.add(_milliseconds(scanner.next()))
    if scanner.peek().is_z():
        scanner.next()
        zone.set(0)
    elif scanner.peek().is_sign():
        zone.sign = 1 if scanner.next().value == "+" else -1
        if scanner.peek().is_number(4):
            hour, minute = divmod(int(scanner.next().value), 100)
            if not (_is_hour(hour) and _is_minute(minute)):
                return False
            zone.hour, zone.minute = hour, minute
        else:
            if not (scanner.peek().is_number(2) and _is_hour(int(scanner.peek().value))):
                return False
            zone.hour = int(scanner.next().value)
            if not scanner.skip_symbol(":"):
                return False
            if not (scanner.peek().is_number(2) and _is_minute(int(scanner.peek().value))):
                return False
            zone.minute = int(scanner.next().value)
    return scanner.peek().kind is Kind.END


def _legacy(scanner: _Scanner, token: Token, day: _Day, time: _Time, zone: _Zone) -> bool:
    """The legacy pass from `token` to the end of the input; False when V8 gives up."""
    has_read_number = bool(day.parts)
    while token.kind is not Kind.END:
        if token.kind is Kind.NUMBER:
            has_read_number = True
            n = int(token.value)
            if scanner.skip_symbol(":"):
                if scanner.skip_symbol(":"):  # "n::" is hours and zero minutes
                    if time.parts:
                        return False
                    time.add(n)
                    time.add(0)
                else:
                    if not time.add(n):
                        return False
                    if scanner.peek().is_symbol("."):
                        scanner.next()
            elif scanner.skip_symbol(".") and time.is_expecting(n):
                time.add(n)
                if not scanner.peek().is_number():
                    return False
                time.add_final(_milliseconds(scanner.next()))
            elif zone.is_expecting(n):
                zone.minute = n
            elif time.is_expecting(n):
                time.add_final(n)
                # A finished time must be followed by the end, a space, Z or a sign.
                peek = scanner.peek()
                if not (peek.kind in (Kind.END, Kind.SPACE) or peek.is_z() or peek.is_sign()):
                    return False
            else:
                if not day.add(n):
                    return False
                scanner.skip_symbol("-")
        elif token.kind is Kind.WORD:
            if token.word is Word.AM_PM and time.parts:
                time.hour_offset = int(token.value)
            elif token.word is Word.MONTH:
                day.named_month = int(token.value)
                scanner.skip_symbol("-")
            elif token.word is Word.ZONE and has_read_number:
                zone.set(int(token.value))
            elif has_read_number or scanner.peek().is_number():
                return False  # unknown words only before the first number, and apart from it
        elif token.is_sign() and (zone.is_utc() or time.parts):
            zone.sign = 1 if token.value == "+" else -1
            n, length = 0, 0
            if scanner.peek().is_number():
                number = scanner.next()
                n, length = int(number.value), number.length
            has_read_number = True
            if scanner.peek().is_symbol(":"):
                zone.hour, zone.minute = n, None
            elif length in (1, 2):
                zone.hour, zone.minute = n, 0
            elif length in (3, 4):
                zone.hour, zone.minute = divmod(n, 100)
            else:
                return False
        elif (token.is_sign() or token.is_symbol(")")) and has_read_number:
            return False
        token = scanner.next()
    return True


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date; `day` may run past the month's end."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468 + day - 1


def _plain_iso(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int, int], int | None] | None:
    """The ES5 ISO forms with every field in range (what the engine and most agents write), read directly;
    None sends anything else through the tokenizer. Both give the same answer for these strings."""
    match = _PLAIN_ISO.fullmatch(text)
    if match is None:
        return None
    year_text, month, day, hour, minute, second, fraction, z, sign, zone_hour, zone_minute = match.groups()
    year = int(year_text)
    date = (year, int(month or 1), int(day or 1))
    if year_text == "-000000" or not (_is_month(date[1]) and _is_day(date[2])):
        return None
    if hour is None:
        return date, (0, 0, 0, 0), 0
    clock = (int(hour), int(minute), int(second or 0), _fraction_ms(fraction) if fraction else 0)
    if not (_is_hour(clock[0]) and _is_minute(clock[1]) and _is_minute(clock[2])):
        return None
    if z:
        return date, clock, 0
    if sign is None:
        return date, clock, None
    if not (_is_hour(int(zone_hour)) and _is_minute(int(zone_minute))):
        return None
    return date, clock, (int(zone_hour) * 3600 + int(zone_minute) * 60) * (-1 if sign == "-" else 1)


def _parse(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int, int], int | None] | None:
    """(year, month, day), (hour, minute, second, ms) and the offset in seconds (None: local), or None."""
    scanner = _Scanner(text)
    day, time, zone = _Day(), _Time(), _Zone()
    token = _iso(scanner, day, time, zone)
    if token is None or not _legacy(scanner, token, day, time, zone):
        return None
    date, clock, offset = day.resolve(), time.resolve(), zone.resolve()
    if date is None or clock is None or offset is False:
        return None
    return date, clock, offset


def v8_date_parse(text: str) -> int | None:
    """Epoch milliseconds for `text` as V8's `Date.parse` reads it with TZ=UTC, or None where it gives NaN."""
    parsed = _plain_iso(text) or _parse(text)
    if parsed is None:
        return None
    date, clock, offset = parsed
    year, month, day_of_month = date
    if abs(year) > _MAX_YEAR:
        return None
    hour, minute, second, millis = clock
    moment = (_days_from_civil(year, month, day_of_month) * 86_400_000
              + ((hour * 60 + minute) * 60 + second) * 1000 + millis)
    if offset is None:
        if abs(moment) > _MAX_LOCAL_MS:
            return None
    else:
        moment -= offset * 1000
    return moment if abs(moment) <= MAX_TIME_MS else None
