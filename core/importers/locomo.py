"""LoCoMo long conversations (snap-research/locomo) read into StrataGate memory.

A LoCoMo conversation is person-to-person: `speaker_a` and `speaker_b` take turns, each utterance has a
`dia_id` ("D3:7" = session 3, utterance 7), and sessions carry a wall-clock date ("1:56 pm on 8 May, 2023").
StrataGate turns are user/assistant pairs, so the mapping is:

- one namespace per conversation: `locomo:<sample_id>` (or `locomo:<file stem>` when there is none);
- one turn per `dia_id`: the utterance is the user message, prefixed with its speaker ("Caroline: ..."), and
  the assistant message is empty. An acknowledgement would add the same words to every turn and pollute
  both the ranking statistics and the any-shared-token raw search; pairing consecutive utterances would
  break the one-to-one link between a turn and the `dia_id` the QA evidence cites;
- image turns keep their caption in the content, as "[image: <blip_caption>]";
- the clock is the session's date-time read as wall-clock time at +08:00 (StrataGate's display offset, so
  the memory shows the same hour LoCoMo does), plus one second per utterance within the session, so turns
  keep their order and every turn has its own instant;
- receipt id `locomo:<conversation>:<dia_id>`, so importing the same file again appends nothing;
- no thread id: a LoCoMo conversation is one continuing relationship, and blocks spanning sessions is what
  an agent's memory of it would look like.

Files come in three shapes: the flat form (conversation fields and `qa` at the top, as the files shipped with
this project), one LoCoMo sample (`sample_id`, `conversation`, `qa`), or the published list of samples.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import stratagate
from stratagate import rules
from stratagate.errors import StrataGateError

CLOCK_OFFSET = timezone(timedelta(hours=8))
"""LoCoMo dates carry no zone; they are read at StrataGate's display offset."""

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_DATE_TIME = re.compile(
    r"\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>am|pm)\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{4})\s*",
    re.IGNORECASE,
)
_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


class LocomoFormatError(StrataGateError):
    """A LoCoMo file is unreadable or lacks a field; the message names the file and the field."""

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path = Path(path)
        self.field = field
        super().__init__(f"{self.path}: {field}: {problem}")


@dataclass(frozen=True)
class LocomoTurn:
    dia_id: str
    session: int
    speaker: str
    text: str
    image_caption: str | None
    created_at: datetime

    @property
    def content(self) -> str:
        """The user message this utterance becomes."""
        caption = f" [image: {self.image_caption}]" if self.image_caption else ""
        return f"{self.speaker}: {self.text}{caption}"


@dataclass(frozen=True)
class LocomoQuestion:
    question: str
    category: int
    evidence: tuple[str, ...]
    """The dia_ids that support the answer, normalized ("D8:6; D9:17" is two ids)."""
    answer: str | None


@dataclass(frozen=True)
class LocomoConversation:
    conversation_id: str
    path: Path
    speakers: tuple[str, str]
    turns: tuple[LocomoTurn, ...]
    questions: tuple[LocomoQuestion, ...]

    @property
    def namespace(self) -> str:
        return f"locomo:{self.conversation_id}"

    def receipt_id(self, turn: LocomoTurn) -> str:
        return f"locomo:{self.conversation_id}:{turn.dia_id}"


def parse_locomo_datetime(text: str) -> datetime:
    """Read a LoCoMo session date such as "1:56 pm on 8 May, 2023" (at `CLOCK_OFFSET`).

    Raises ValueError naming the text when it is not in that form or not a real date."""
    match = _DATE_TIME.fullmatch(text)
    month = _MONTHS.get(match.group("month").lower()) if match else None
    if not match or month is None:
        raise ValueError(f"not a LoCoMo date-time like '1:56 pm on 8 May, 2023': {text!r}")
    hour = int(match.group("hour"))
    if not 1 <= hour <= 12:
        raise ValueError(f"hour {hour} is not on a 12-hour clock: {text!r}")
    hour = hour % 12 + (12 if match.group("half").lower() == "pm" else 0)
    try:
        return datetime(
            int(match.group("year")), month, int(match.group("day")), hour, int(match.group("minute")),
            tzinfo=CLOCK_OFFSET,
        )
    except ValueError as error:
        raise ValueError(f"{error}: {text!r}") from None


def normalize_evidence(evidence: object) -> tuple[str, ...]:
    """Evidence ids as "D<session>:<utterance>", in order, deduplicated. LoCoMo's evidence lists hold a few
    irregular entries ("D8:6; D9:17" in one string, "D:11:26"), so ids are found rather than trusted."""
    items = evidence if isinstance(evidence, list) else [evidence]
    ids = [f"D{session}:{utterance}" for item in items for session, utterance in _DIA_ID.findall(str(item))]
    return tuple(dict.fromkeys(ids))


def read_locomo_file(path: Path | str) -> list[LocomoConversation]:
    """Every conversation in a LoCoMo file, validated. Raises LocomoFormatError naming file and field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise LocomoFormatError(path, "file", f"cannot be read ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise LocomoFormatError(path, "file", f"is not JSON ({error})") from None
    if isinstance(data, list):
        if not data:
            raise LocomoFormatError(path, "file", "holds an empty list, no conversation")
        return [_read_sample(path, sample, f"[{index}]") for index, sample in enumerate(data)]
    return [_read_sample(path, data, "")]


def _read_sample(path: Path, sample: object, where: str) -> LocomoConversation:
    if not isinstance(sample, dict):
        raise LocomoFormatError(path, where or "file", "is not a JSON object")
    if "conversation" in sample:
        conversation = sample["conversation"]
        conversation_where = f"{where}.conversation" if where else "conversation"
        if not isinstance(conversation, dict):
            raise LocomoFormatError(path, conversation_where, "is not a JSON object")
    else:
        conversation, conversation_where = sample, where
    sample_id = sample.get("sample_id")
    conversation_id = str(sample_id).strip() if sample_id is not None and str(sample_id).strip() else path.stem
    return LocomoConversation(
        conversation_id=conversation_id,
        path=path,
        speakers=(
            _text_field(path, conversation, conversation_where, "speaker_a"),
            _text_field(path, conversation, conversation_where, "speaker_b"),
        ),
        turns=tuple(_read_turns(path, conversation, conversation_where)),
        questions=tuple(_read_questions(path, sample.get("qa", []), _join(where, "qa"))),
    )


def _read_turns(path: Path, conversation: dict[str, Any], where: str) -> Iterator[LocomoTurn]:
    sessions = sorted(
        int(match.group(1)) for key in conversation if (match := _SESSION_KEY.fullmatch(key))
    )
    if not sessions:
        raise LocomoFormatError(path, _join(where, "session_1"), "missing: the file has no session")
    seen: set[str] = set()
    for session in sessions:
        session_field = _join(where, f"session_{session}")
        turns = conversation[f"session_{session}"]
        if not isinstance(turns, list):
            raise LocomoFormatError(path, session_field, "is not a list of turns")
        date_field = f"session_{session}_date_time"
        started_at_text = _text_field(path, conversation, where, date_field)
        try:
            started_at = parse_locomo_datetime(started_at_text)
        except ValueError as error:
            raise LocomoFormatError(path, _join(where, date_field), str(error)) from None
        for index, turn in enumerate(turns):
            turn_field = f"{session_field}[{index}]"
            if not isinstance(turn, dict):
                raise LocomoFormatError(path, turn_field, "is not a JSON object")
            dia_id = _text_field(path, turn, turn_field, "dia_id")
            if dia_id in seen:
                raise LocomoFormatError(path, f"{turn_field}.dia_id", f"{dia_id} appears twice")
            seen.add(dia_id)
            caption = turn.get("blip_caption")
            yield LocomoTurn(
                dia_id=dia_id,
                session=session,
                speaker=_text_field(path, turn, turn_field, "speaker"),
                text=_text_field(path, turn, turn_field, "text", allow_empty=True),
                image_caption=caption.strip() if isinstance(caption, str) and caption.strip() else None,
                created_at=started_at + timedelta(seconds=index),
            )


def _read_questions(path: Path, items: object, where: str) -> Iterator[LocomoQuestion]:
    if not isinstance(items, list):
        raise LocomoFormatError(path, where, "is not a list of questions")
    for index, item in enumerate(items):
        item_field = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise LocomoFormatError(path, item_field, "is not a JSON object")
        category = item.get("category")
        if isinstance(category, bool) or not isinstance(category, int):
            raise LocomoFormatError(path, f"{item_field}.category", f"is not a category number: {category!r}")
        answer = item.get("answer")
        yield LocomoQuestion(
            question=_text_field(path, item, item_field, "question"),
            category=category,
            evidence=normalize_evidence(item.get("evidence", [])),
            answer=None if answer is None else str(answer),
        )


def _text_field(path: Path, record: dict[str, Any], where: str, key: str, allow_empty: bool = False) -> str:
    value = record.get(key)
    field = _join(where, key)
    if value is None:
        raise LocomoFormatError(path, field, "missing")
    if not isinstance(value, str):
        raise LocomoFormatError(path, field, f"is not text: {value!r}")
    if not allow_empty and not value.strip():
        raise LocomoFormatError(path, field, "is empty")
    return value.strip()


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


@dataclass(frozen=True)
class ImportSummary:
    namespace: str
    turns: int
    """Turns in the conversation."""
    appended: int
    """Turns appended by this import; the others were already there (same receipt id)."""
    blocks: int
    events: int


def import_conversation(
    conversation: LocomoConversation,
    database: str | Path,
    namespace: str | None = None,
    progress: Callable[[LocomoTurn], None] | None = None,
) -> ImportSummary:
    """Append every turn of `conversation` not imported before to `database` (namespace default
    `conversation.namespace`), with the rule-based summarizer, extractor and projector, so blocks are
    sealed and events extracted without a model. `progress` is called after each turn.

    The file was fully validated when read, so bad input stops before anything is written. Each turn is
    its own transaction: if the engine fails midway, the turns before stay and importing again resumes
    after them (their receipts are known)."""
    namespace = conversation.namespace if namespace is None else namespace
    memory = stratagate.open(database, namespace, **rules.engine_options())
    try:
        appended = 0
        for turn in conversation.turns:
            receipt_id = conversation.receipt_id(turn)
            if not memory.has_ingestion_receipt(receipt_id):
                memory.append_turn(user=turn.content, assistant="", created_at=turn.created_at, receipt_id=receipt_id)
                appended += 1
            if progress is not None:
                progress(turn)
        memory.resume_pending_work()
        return ImportSummary(namespace, len(conversation.turns), appended, len(memory.list_blocks()),
                             len(memory.list_events()))
    finally:
        memory.close()
