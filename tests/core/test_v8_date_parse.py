"""`parse_js_date` gives V8's `Date.parse` answer (with TZ=UTC) for every string.

The fixture holds 12,000 strings (the forms of tests/differential/date_corpus.py and their mutations) with the
answers Node 22 gave; the live test asks Node about a fresh corpus from a seed the parser was never tuned on.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate import v8date
from stratagate.timeutil import parse_js_date
from tests.conftest import FIXTURES
from tests.differential import reference
from tests.differential.date_corpus import corpus
from tests.property_budget import examples

RECORDED = json.loads((FIXTURES / "v8-date-parse.json").read_text(encoding="utf-8"))


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-02-30", "2026-03-02T00:00:00Z"),  # day overflow rolls over
        ("March 2026", "2026-03-01T00:00:00Z"),
        ("Mar 9", "2001-03-09T00:00:00Z"),  # the missing year is 1, read as 2001
        ("3/9/2026", "2026-03-09T00:00:00Z"),
        ("03/09/2026 10:00 PM", "2026-03-09T22:00:00Z"),
        ("09.03.2026", "2026-09-03T00:00:00Z"),  # month first
        ("9-Mar-2026", "2026-03-09T00:00:00Z"),
        ("2026 March 9", "2026-03-09T00:00:00Z"),
        ("2026.03.09", "2026-03-09T00:00:00Z"),
        ("Spring 2026", "2026-01-01T00:00:00Z"),  # a leading unknown word is skipped
        ("Mar 9 2026 10:00 EST", "2026-03-09T15:00:00Z"),
        ("Mar 9 2026 10:00 (CET)", "2026-03-09T10:00:00Z"),  # comments are skipped
        ("0", "2000-01-01T00:00:00Z"),
        ("12", "2001-12-01T00:00:00Z"),
        ("2026-03-09T21:00", "2026-03-09T21:00:00Z"),  # offset-less date-time: UTC (documented)
        ("Mon Mar 09 2026 21:00:00 GMT+0800 (China Standard Time)", "2026-03-09T13:00:00Z"),
    ],
)
def test_forms_v8_reads(text, expected):
    assert parse_js_date(text) == _ms(expected)


@pytest.mark.parametrize("text", ["2026-03-09T21:00:00 GMT+0800", "April 1st, 2026", "March 9th 2026", "+25:00",
                                  "2026-03-09T21:00:00+25:00", "1st", "31", "", "garbage", "2026年3月9日"])
def test_forms_v8_rejects(text):
    assert parse_js_date(text) is None


def test_every_recorded_v8_answer_is_matched():
    cases = RECORDED["cases"]
    assert len(cases) == 12_000 and RECORDED["tz"] == "UTC"
    wrong = [(text, answer, parse_js_date(text)) for text, answer in cases if parse_js_date(text) != answer]
    assert wrong == []


@pytest.mark.skipif(reference.node_binary() is None, reason=reference.missing_reason() or "")
def test_a_fresh_corpus_matches_live_v8():
    seed = secrets.randbelow(2**32)
    strings = corpus(seed, 5000)
    answers = reference.v8_date_parse(strings)["answers"]
    wrong = [(text, answer, parse_js_date(text)) for text, answer in zip(strings, answers, strict=True)
             if parse_js_date(text) != answer]
    assert wrong == [], f"seed {seed}"


ISO_LIKE = st.from_regex(
    r"\A([+-][0-9]{6}|[0-9]{4})(-[0-9]{2}(-[0-9]{2})?)?([Tt][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,12})?)?"
    r"([Zz]|[+-][0-9]{2}:?[0-9]{2})?)?\Z")


@settings(max_examples=examples(300))
@given(ISO_LIKE)
def test_the_plain_iso_shortcut_agrees_with_the_tokenizer(text):
    shortcut = v8date._plain_iso(text)
    assert shortcut is None or shortcut == v8date._parse(text)
