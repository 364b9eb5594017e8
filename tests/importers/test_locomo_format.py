"""Reading LoCoMo files: turns, clock, captions, evidence, and clear errors for bad files."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.errors import StrataGateError
from stratagate.importers.locomo import (
    CLOCK_OFFSET,
    LocomoFormatError,
    normalize_evidence,
    parse_locomo_datetime,
    read_locomo_file,
)

SMALL = Path(__file__).with_name("small-locomo.json")


def test_flat_file_is_one_conversation_named_after_the_file():
    [conversation] = read_locomo_file(SMALL)
    assert conversation.conversation_id == "small-locomo"
    assert conversation.namespace == "locomo:small-locomo"
    assert conversation.speakers == ("Ada", "Brook")
    assert [turn.dia_id for turn in conversation.turns] == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3"]


def test_turn_content_names_the_speaker_and_keeps_image_captions():
    [conversation] = read_locomo_file(SMALL)
    turns = {turn.dia_id: turn for turn in conversation.turns}
    assert turns["D1:2"].content == "Brook: Congratulations! How is Pixel settling in?"
    assert turns["D1:3"].content == (
        "Ada: She sleeps on my keyboard all day. [image: a photo of a cat lying on a laptop keyboard]"
    )
    # A caption without an image URL is kept too.
    assert turns["D2:3"].content.endswith("[image: a photo of a spilled mug of tea]")


def test_session_date_is_the_clock_with_one_second_per_utterance():
    [conversation] = read_locomo_file(SMALL)
    session_2 = [turn for turn in conversation.turns if turn.session == 2]
    start = datetime(2024, 4, 17, 19, 40, tzinfo=CLOCK_OFFSET)
    assert [turn.created_at for turn in session_2] == [start + timedelta(seconds=i) for i in range(3)]
    assert conversation.turns[0].created_at.isoformat() == "2024-03-03T09:05:00+08:00"


def test_questions_keep_category_answer_and_split_evidence():
    [conversation] = read_locomo_file(SMALL)
    assert [(q.category, q.evidence) for q in conversation.questions] == [
        (4, ("D1:1",)),
        (2, ("D2:1",)),
        (1, ("D1:3", "D2:2")),
    ]
    assert conversation.questions[2].answer == "2"


def test_sample_and_list_shapes_use_the_sample_id(tmp_path):
    flat = json.loads(SMALL.read_text())
    qa = flat.pop("qa")
    samples = [{"sample_id": "conv-1", "conversation": flat, "qa": qa}, {"sample_id": "conv-2", "conversation": flat}]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(samples))
    first, second = read_locomo_file(path)
    assert (first.namespace, second.namespace) == ("locomo:conv-1", "locomo:conv-2")
    assert len(first.questions) == 3 and second.questions == ()
    assert len(second.turns) == 7


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 Jan, 2024", datetime(2024, 1, 1, 12, 30)),
        ("10:37 AM on 27 June 2023", datetime(2023, 6, 27, 10, 37)),
    ],
)
def test_locomo_date_times(text, expected):
    assert parse_locomo_datetime(text) == expected.replace(tzinfo=CLOCK_OFFSET)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2999, 12, 31)))
def test_any_minute_written_the_locomo_way_reads_back(moment):
    moment = moment.replace(second=0, microsecond=0)
    hour = moment.hour % 12 or 12
    half = "am" if moment.hour < 12 else "pm"
    text = f"{hour}:{moment.minute:02d} {half} on {moment.day} {moment.strftime('%B')}, {moment.year}"
    assert parse_locomo_datetime(text) == moment.replace(tzinfo=CLOCK_OFFSET)


@pytest.mark.parametrize("text", ["yesterday", "13:05 pm on 8 May, 2023", "1:05 pm on 31 June, 2023", ""])
def test_bad_date_times_are_refused(text):
    with pytest.raises(ValueError, match="2023|LoCoMo|12-hour"):
        parse_locomo_datetime(text)


def test_irregular_evidence_ids_are_normalized():
    assert normalize_evidence(["D8:6; D9:17", "D:11:26", "D8:6"]) == ("D8:6", "D9:17", "D11:26")
    assert normalize_evidence([]) == ()


def _write(tmp_path: Path, data: object, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _small_with(change) -> dict:
    data = json.loads(SMALL.read_text())
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (lambda d: d.pop("speaker_b"), "speaker_b", "missing"),
        (lambda d: d["session_2"][1].pop("dia_id"), "session_2[1].dia_id", "missing"),
        (lambda d: d["session_1"][0].update(text=7), "session_1[0].text", "not text"),
        (lambda d: d.update(session_2_date_time="soon"), "session_2_date_time", "LoCoMo date-time"),
        (lambda d: d.pop("session_1_date_time"), "session_1_date_time", "missing"),
        (lambda d: d["session_2"][0].update(dia_id="D1:1"), "session_2[0].dia_id", "appears twice"),
        (lambda d: d["qa"][1].update(category="temporal"), "qa[1].category", "category number"),
        (lambda d: d.update(session_1={"turns": []}), "session_1", "not a list"),
    ],
)
def test_bad_file_names_the_file_and_the_field(tmp_path, change, field, problem):
    path = _write(tmp_path, _small_with(change))
    with pytest.raises(LocomoFormatError) as raised:
        read_locomo_file(path)
    assert isinstance(raised.value, StrataGateError)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"{path}: {field}: ")
    assert problem in str(raised.value)


def test_unreadable_and_non_json_files_are_named(tmp_path):
    with pytest.raises(LocomoFormatError, match=r"missing\.json: file: cannot be read"):
        read_locomo_file(tmp_path / "missing.json")
    with pytest.raises(LocomoFormatError, match=r"broken\.json: file: is not JSON"):
        read_locomo_file(_write(tmp_path, "{not json", "broken.json"))
    with pytest.raises(LocomoFormatError, match=r"empty\.json: session_1: missing"):
        read_locomo_file(_write(tmp_path, {"speaker_a": "A", "speaker_b": "B"}, "empty.json"))
