"""Date strings to ask V8's `Date.parse` about: the forms agent memories contain, their near misses, and mutations.

`structured(rng)` walks every form family (ES5 ISO, legacy month names, numeric dates, times, AM/PM, zone words
and offsets, comments, leading words, bare numbers, other scripts, random strings of the tokenizer's tokens);
`mutated(rng, text)` perturbs them one edit at a time, so the corpus also covers the tokenizer's corners. The same seed always gives the same corpus.
"""

from __future__ import annotations

import random

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ZONE_WORDS = ["Z", "z", "UTC", "UT", "GMT", "gmt", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT", "CET",
              "JST", "BST", "IST", "utc", "Utc", "GMTX", "UTCZ"]
OFFSETS = ["+08:00", "-05:00", "+0800", "-0530", "+8", "-8", "+08", "+800", "+25:00", "+2500", "+12345", "+",
           "-", "+08:", "+08:30", "+00:00", "-00:00", "+23:59", "+24:00", "+0860", "+5:30", "+123456:"]
COMMENTS = ["(CET)", "(China Standard Time)", "(UTC)", "(nested (comment))", "(unclosed", ")", "()", "(2026)"]
LEADING = ["Spring", "Q1", "week", "today", "Mon", "Monday,", "Tue", "on", "at", "T", "t", "Date:", "approx.",
           "~", "@", "#", "ca", "the", "am", "pm"]
SEPARATORS = [" ", "  ", ", ", ",", "-", "/", ".", "\t", "\n", "\u00a0", "\u3000", "\u2028", "_"]
SCRIPTS = ["2026年3月9日", "2026年3月9日 21:00", "令和8年3月9日", "2026년 3월 9일", "9 มีนาคม 2026", "٢٠٢٦-٠٣-٠٩",
           "9 марта 2026", "9 мар 2026", "2026-03-09 🚀", "🚀 2026-03-09", "👩‍💻 March 9 2026", "Ｍａｒｃｈ 9 2026",
           "２０２６-０３-０９", "2026−03−09", "2026‐03‐09", "März 9 2026", "9 mars 2026", "marzo 9 2026", "Mär 9 2026",
           "9 Mär. 2026", "March\u200b9 2026", "2026-03-09\u00a0", "\ufeff2026-03-09", "2026-03-09\x00junk",
           "Mar\x009 2026", "ε 2026", "\u0130 2026", "\u212a 2026"]
TIMES = ["21:00", "21:00:00", "21:00:00.5", "21:00:00.123", "21:00:00.123456", "21:00:00.1234567891234",
         "9:05", "9:5", "21:00.5", "21:", "21::", "21:00:", "21:00:00:00", "24:00", "24:00:00", "24:00:01",
         "24:01", "25:00", "23:60", "23:59:60", "10 PM", "10:00 PM", "10:00PM", "10:00 pm", "12:00 AM",
         "12:00 PM", "0:00 PM", "13:00 PM", "10:00 P.M.", "10:00 a.m.", "10:00:00 AM", "10 AM", "10am",
         "12:30:15.250 am", "7:00 Pm", "07:00 AMX", "1:2:3", "1:2:3.4", "99:99", "21h00"]

SHORT_FORMS = ["", " ", "0", "1", "12", "31", "32", "49", "50", "99", "100", "999", "2026", "20260309",
               "-1", "+1", "1e3", "0x10", "12.5", "1,000", "NaN", "Infinity", "null", "undefined",
               "true", "now", "today", "Z", "T", "UTC", "GMT+8", "March", "Mar", "am", "(2026)",
               "2026 (note", "1st", "2nd March", "April 1st, 2026", "March 9th 2026", "9th of March 2026",
               "2026-03-09T21:00:00 GMT+0800", "Spring 2026", "Mar 9", "March 2026", "3/9/2026",
               "03/09/2026 10:00 PM", "09.03.2026", "9-Mar-2026", "2026 March 9", "2026.03.09",
               "2026-02-30", "2026-02-31T10:00", "+25:00", "2026-03-09T21:00:00+25:00"]
# Edges of the tokenizer and the ranges: offsets that overflow V8's 32-bit arithmetic, JS time-range limits,
# Unicode spaces inside and between words, nested and unclosed comments, repeated AM/PM and zones.
EDGES = ["2026-03-09 10:00 GMT+300000:", "2026-03-09 10:00 GMT+596523:", "2026-03-09 10:00 GMT+596524:",
         "2026-03-09 10:00 GMT+1193047:", "10:00 2026-03-09 +1193047:30", "\u20282026", "Mar\u20289 2026",
         "Mar\u20299 2026", "\u2028Mar 9 2026", "Mar\u00859 2026", "Mar\u180e9 2026", "Mar\u200b 9 2026",
         "+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", "-271821-04-20T00:00:00Z",
         "-271821-04-19T23:59:59.999Z", "Sep 13 275760", "Sep 13 275760 00:00:00.001", "+275760-09-13T00:00:00",
         "-271821-04-19T23:00:00", "-271821-04-19T23:00:00 +0000", "1/1/-5", "Jan 1 1000000", "Jan 1 -1000001",
         "-1000000-01-01", "x\u3000Mar 9 2026", "(a(b)c) 2026", "2026 (a(b)c", "2026 )", "2026 (",
         "2026-03-09T10:00:00.", "2026-03-09T10:00:00.Z", "Mar 9 2026 10:00 PM PM", "Mar 9 2026 EST EST+1",
         "10:00:00:00 Mar 9 2026", "Mar 9 2026 12:00:00.5:00", "-001900-06  08:59:15.054287099902",
         "2026-03-09T10:00:00.0000000001Z", "2026-03-09 10:00:00.000000000123"]


def _pad(number: int, width: int) -> str:
    return str(number).zfill(width)


def _year(rng: random.Random) -> int:
    return rng.choice([2026, 2026, 2026, 2024, 2000, 1999, 1970, 1969, 1900, 2049, 2050, 49, 50, 99, 0, 1, 100,
                       999, 10000, 275760, 275761, -1, rng.randint(1, 9999)])


def _day(rng: random.Random) -> int:
    return rng.choice([1, 9, 15, 28, 29, 30, 31, 0, 32, 99, rng.randint(1, 31)])


def _month(rng: random.Random) -> int:
    return rng.choice([1, 2, 3, 4, 6, 9, 11, 12, 0, 13, rng.randint(1, 12)])


def _month_word(rng: random.Random, month: int) -> str:
    name = MONTHS[(month - 1) % 12]
    word = rng.choice([name, name[:3], name[:3] + ".", name.upper(), name.lower(), name[:3].upper(), name[:4],
                       name + "x", name[:2], "Sept" if month == 9 else name])
    return word


def _zone(rng: random.Random) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return rng.choice(ZONE_WORDS)
    if kind == 1:
        return rng.choice(OFFSETS)
    if kind == 2:
        return rng.choice(["GMT", "UTC", "Z"]) + rng.choice(OFFSETS)
    if kind == 3:
        return rng.choice(COMMENTS)
    return rng.choice(["GMT", "UTC"]) + rng.choice(OFFSETS) + " " + rng.choice(COMMENTS)


def _iso(rng: random.Random) -> str:
    year = _year(rng)
    if rng.random() < 0.15:
        text = rng.choice(["+", "-"]) + _pad(abs(year), 6)
    elif rng.random() < 0.05:
        text = rng.choice(["-000000", "+000000", "+2026", "-2026", "26", "202", "20261"])
    else:
        text = _pad(abs(year), 4)
    shape = rng.randrange(4)
    if shape >= 1:
        text += "-" + _pad(_month(rng), rng.choice([2, 2, 2, 1]))
    if shape >= 2:
        text += "-" + _pad(_day(rng), rng.choice([2, 2, 2, 1, 3]))
    if shape == 3 or rng.random() < 0.5:
        separator = rng.choice(["T", "T", "T", "t", " ", "  ", "T ", "_"])
        hour = rng.choice([0, 9, 21, 23, 24, 25, rng.randint(0, 23)])
        text += separator + _pad(hour, rng.choice([2, 2, 1]))
        if rng.random() < 0.95:
            text += ":" + _pad(rng.choice([0, 30, 59, 60, rng.randint(0, 59)]), rng.choice([2, 2, 1]))
        if rng.random() < 0.6:
            text += ":" + _pad(rng.choice([0, 15, 59, 60]), 2)
            if rng.random() < 0.5:
                text += "." + "".join(rng.choice("0123456789") for _ in range(rng.choice([1, 2, 3, 3, 4, 6, 9, 12])))
        if rng.random() < 0.7:
            text += rng.choice(["", " "]) + rng.choice(["Z", "z", "+08:00", "-05:00", "+0800", "+08", "+8:00",
                                                         "+25:00", "+24:00", "+23:59", "+23:60", "-00:00",
                                                         " GMT+0800", " UTC", " GMT", " EST", " (CET)", "+08:00Z",
                                                         "Z+08:00", "+08:00:00", " +08:00", "ZZ"])
    elif rng.random() < 0.2:
        text += rng.choice(["Z", " ", " UTC", "T", "T10", "junk", " (note)", "/", "."])
    return text


def _numeric(rng: random.Random) -> str:
    year, month, day = _year(rng), _month(rng), _day(rng)
    separator = rng.choice(["/", "/", "-", ".", " ", "/", ". "])
    year_text = str(year) if rng.random() < 0.8 else _pad(year % 100, 2)
    month_text = _pad(month, rng.choice([1, 2]))
    day_text = _pad(day, rng.choice([1, 2]))
    order = rng.choice([(year_text, month_text, day_text), (month_text, day_text, year_text),
                        (day_text, month_text, year_text), (month_text, day_text), (year_text, month_text),
                        (month_text, year_text)])
    text = separator.join(order)
    if rng.random() < 0.4:
        text += rng.choice([" ", "  ", ", ", "T", " at "]) + rng.choice(TIMES)
    if rng.random() < 0.3:
        text += " " + _zone(rng)
    return text


def _named(rng: random.Random) -> str:
    month = rng.randint(1, 12)
    word = _month_word(rng, month)
    day = str(_day(rng))
    if rng.random() < 0.15:
        day += rng.choice(["st", "nd", "rd", "th"])
    year = str(_year(rng))
    order = rng.choice([(word, day + ",", year), (word, day, year), (day, word, year), (year, word, day),
                        (word, year), (word, day), (day, word), (year, word), (word,), (year, day, word),
                        (word, year, day)])
    separator = rng.choice([" ", " ", " ", "-", "/", ".", ", "])
    text = separator.join(order)
    if rng.random() < 0.25:
        weekday = rng.choice(WEEKDAYS)
        text = rng.choice([weekday, weekday[:3], weekday[:3] + ","]) + " " + text
    if rng.random() < 0.45:
        text += rng.choice([" ", ", ", " at ", "T", " "]) + rng.choice(TIMES)
    if rng.random() < 0.35:
        text += rng.choice([" ", ""]) + _zone(rng)
    return text


def _js_output(rng: random.Random) -> str:
    """What JS itself prints: Date#toString, toUTCString, toISOString, toDateString, toLocale*."""
    month, day, year = rng.randint(1, 12), rng.randint(1, 31), _year(rng)
    weekday = rng.choice(WEEKDAYS)[:3]
    abbreviation = MONTHS[month - 1][:3]
    clock = f"{_pad(rng.randint(0, 23), 2)}:{_pad(rng.randint(0, 59), 2)}:{_pad(rng.randint(0, 59), 2)}"
    return rng.choice([
        f"{weekday} {abbreviation} {_pad(day, 2)} {year} {clock} GMT{rng.choice(['+0800', '-0500', '+0000'])}"
        f" ({rng.choice(['China Standard Time', 'Coordinated Universal Time', 'CET'])})",
        f"{weekday}, {_pad(day, 2)} {abbreviation} {year} {clock} GMT",
        f"{_pad(year, 4)}-{_pad(month, 2)}-{_pad(day, 2)}T{clock}.{_pad(rng.randint(0, 999), 3)}Z",
        f"{weekday} {abbreviation} {_pad(day, 2)} {year}",
        f"{month}/{day}/{year}, {rng.randint(1, 12)}:{_pad(rng.randint(0, 59), 2)}:00 {rng.choice(['AM', 'PM'])}",
        f"{_pad(day, 2)}/{_pad(month, 2)}/{year}, {clock}",
    ])


def _short(rng: random.Random) -> str:
    return rng.choice(SHORT_FORMS)


# Tokens V8's tokenizer tells apart, to string together at random.
_TOKENS = list("0123456789 :-+./,()") + ["T", "Z", "t", "z", "AM", "PM", "am", "Jan", "March", "Sept", "GMT", "UTC",
                                        "UT", "EST", "pdt", "Mon", "x", "\t", "(x)", "2026", "12", "31", "00", "24",
                                        "60", "999", "1000000", "0000", "000000", "+000000", "-000001", "\u00a0",
                                        "年", "🚀"]


def _token_soup(rng: random.Random) -> str:
    return "".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 12)))


def _leading(rng: random.Random, text: str) -> str:
    word = rng.choice(LEADING)
    return word + rng.choice([" ", "", ": ", ", ", "-"]) + text


def structured(rng: random.Random) -> str:
    """One date string from a form family, sometimes behind a leading word or with a trailing comment."""
    family = rng.choices([_iso, _numeric, _named, _js_output, _short, _token_soup], weights=[30, 20, 30, 8, 12, 10])[0]
    text = family(rng)
    if rng.random() < 0.08:
        text = _leading(rng, text)
    if rng.random() < 0.05:
        text += " " + rng.choice(COMMENTS)
    if rng.random() < 0.03:
        text = rng.choice(SCRIPTS)
    if rng.random() < 0.05:
        text = rng.choice(["", " ", "  ", "\t"]) + text + rng.choice(["", " ", "\n"])
    return text


_MUTATION_CHARACTERS = "0123456789 :-+./,()TZtzAPMapm\t年月日🚀\u00a0\u2028é" + "".join(SEPARATORS)


def mutated(rng: random.Random, text: str) -> str:
    """`text` with one to three random edits: insert, delete, replace or duplicate a character, flip case."""
    characters = list(text)
    for _ in range(rng.randint(1, 3)):
        position = rng.randint(0, len(characters))
        edit = rng.randrange(5)
        if edit == 0:
            characters.insert(position, rng.choice(_MUTATION_CHARACTERS))
        elif characters and edit == 1:
            del characters[min(position, len(characters) - 1)]
        elif characters and edit == 2:
            characters[min(position, len(characters) - 1)] = rng.choice(_MUTATION_CHARACTERS)
        elif characters and edit == 3:
            index = min(position, len(characters) - 1)
            characters.insert(index, characters[index])
        elif characters:
            index = min(position, len(characters) - 1)
            characters[index] = characters[index].swapcase()
    return "".join(characters)


def corpus(seed: int, size: int) -> list[str]:
    """`size` distinct date strings: two thirds structured, one third mutations of them."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    for text in SCRIPTS + SHORT_FORMS + EDGES:
        seen.setdefault(text)
    while len(seen) < size:
        text = structured(rng)
        if rng.random() < 0.35:
            text = mutated(rng, text)
        seen.setdefault(text)
    return list(seen)[:size]
