"""Deterministic rule-based summarizer, extractor and projector, so a memory works with no model at all.

`engine_options()` gives all three as keyword arguments for `stratagate.open` / `in_memory`. They are simple on
purpose (patterns, not understanding): the summarizer always asks for extraction; the extractor makes one event
card per user statement that carries a decision, preference, plan, fact or date (mentioned at the message time,
happened at an explicit date in the text when there is one); the projector turns those cards into elements
and facts for the people and projects they name. `summarizer=None` keeps the reference's default instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from stratagate.blocks import BlockSummary
from stratagate.callbacks import ExtractionRequest, ExtractionResult, ProjectionRequest, ProjectionResult
from stratagate.model import Event, Message
from stratagate.text import collapse_whitespace, utf16_cut
from stratagate.timeutil import parse_js_date

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH_NAMES = {name: index + 1 for index, name in enumerate(MONTHS)} | {
    name[:3]: index + 1 for index, name in enumerate(MONTHS)} | {"sept": 9}
_STOPWORDS = frozenset(re.findall(r"\S+", """
a an and are as at be been but by can could did do does for from had has have he her his how i i'm i've if in
into is it it's its just let's me my no not of on or our so that the their them then there these they this to
us was we we'll we're were what when where which who will with would you your yes ok okay also about after
all any before did don't get got go going good great hi hello hey thanks thank sure next last today tomorrow
yesterday week month year please want need like one two some more than very
"""))
_NOT_NAMES = frozenset(
    {"I", "I'm", "I've", "I'll", "I'd", "We", "We'll", "We're", "Let's", "The", "A", "An", "It", "It's", "This",
     "That", "Please", "Ok", "OK", "Okay", "Yes", "No", "Also", "And", "But", "So", "Then", "Today", "Tomorrow",
     "Yesterday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Hi", "Hello",
     "Thanks", "Great", "Sure", "Next", "Our", "My", "Can", "Could", "Should", "Would", "Will", "What", "When",
     "Where", "Who", "How", "Why", "If", "Is", "Are", "Do", "Does", "Did", "Note", "Noted", "Done", "Good",
     "Remember", "Make", "Keep", "Use", "Let", "Schedule", "Move", "Moving", "Switch", "Important", "Actually",
     "Run", "Read", "Write", "Add", "Check", "Draft", "Send", "Create", "Fix", "Update", "Deploy", "Ship", "Book",
     "Set", "Call", "Ask", "Tell", "Show", "Find", "Open", "Close", "Start", "Stop", "Try", "Review", "Merge",
     "Push", "Plan", "Give", "Put", "Help", "Any", "Just", "Now", "Maybe", "Sorry", "Welcome", "Got", "Sounds"}
    | {month.capitalize() for month in MONTHS} | {month[:3].capitalize() for month in MONTHS}
)
_KINDS = (
    ("safety", re.compile(r"\b(allerg\w*|never (?:share|send|store|commit)|password|secret|unsafe|danger\w*)\b", re.I)),
    ("preference", re.compile(r"\b(prefer\w*|i (?:really )?(?:like|love|hate|dislike)|please (?:always|never|keep|use|don't|avoid)|i'd rather)\b", re.I)),
    ("change", re.compile(r"\b(chang\w+|switch\w*|moved?|instead|postpon\w+|reschedul\w+|no longer|replac\w+)\b", re.I)),
    ("decision", re.compile(r"\b(decid\w+|decision|agreed|going with|chose|choose|we(?:'ll| will) use|settled on|let's use|approved)\b", re.I)),
    ("plan", re.compile(r"\b(schedul\w+|deadline|due|plan\w*|release|launch|demo|meeting|ship\w*|deliver\w*)\b", re.I)),
    ("identity", re.compile(r"\b((?i:my name is|i am (?:a|an|the)\b|i'm (?:a|an|the)\b|i work (?:as|at|on))|(?:I am|I'm) [A-Z]\w+)")),
    ("fact", re.compile(r"\b(is based in|lives in|works on|owns|leads|joined|is responsible for|is the|reports to|uses)\b", re.I)),
    # A first-person statement of some length: what happened to, or matters to, the speaker.
    ("experience", re.compile(r"\b(I|I'm|I've|I'd|I'll|my|me|we|our|we've|we're)\b(?=(?:\W+\w+){5})", re.I)),
)
_CRITICALITY = {"safety": "safety", "preference": "preference", "identity": "identity"}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(r"\b(" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b", re.I)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\b(?:,?\s+(\d{4}))?", re.I)
_RELATIVE = {"today": 0, "yesterday": -1, "tomorrow": 1}
# Coarser relative expressions: (pattern, how to shift the mention date, precision).
_RELATIVE_PERIODS = (
    (re.compile(r"\blast week(?:end)?\b", re.I), "week", -1),
    (re.compile(r"\bnext week(?:end)?\b", re.I), "week", 1),
    (re.compile(r"\blast month\b", re.I), "month", -1),
    (re.compile(r"\bnext month\b", re.I), "month", 1),
    (re.compile(r"\blast year\b", re.I), "year", -1),
    (re.compile(r"\bnext year\b", re.I), "year", 1),
)
_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*)?):\s+(.+)$", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PROJECT = re.compile(r"\b(?:project|Project)\s+([A-Z][\w-]+)|\b([A-Z][\w-]+)\s+project\b")
_CHOICE = re.compile(
    r"\b(?:use|using|switch(?:ed|ing)? to|mov(?:e|ed|ing) to|go(?:ing)? with|chose|choose|settled on|pick(?:ed)?)\s+"
    r"([A-Z][\w.+#-]*(?:\s[A-Z][\w.+#-]*)?)(?:\s+(?:for|as)\s+(?:the\s+|our\s+)?([a-z][a-z ]{2,30}?))?(?=[.,;:!?]|\s+(?:instead|from|because|since|and|now|in|on|at|so|but)\b|$)"
)
TAG_LIMIT = 6
RECENT_EVENTS = 200


_SMALL_TALK = re.compile(r"^(?:hi|hey|hello|thanks|thank you|yeah|yep|yes|wow|oh|ok|okay|sure|totally|great|cool)\b", re.I)


_SMALL_TALK_OPENER = re.compile(_SMALL_TALK.pattern + r"[^,!.]{0,20}[,!]\s*", re.I)


def _first_sentence(text: str, limit: int) -> str:
    return utf16_cut(_SENTENCE_END.split(collapse_whitespace(text), maxsplit=1)[0], limit)


def _title(text: str, limit: int = 80) -> str:
    """The first sentence that says something (not a greeting or thanks, at least four words), else the first."""
    sentences = _SENTENCE_END.split(collapse_whitespace(text))
    for sentence in sentences:
        said = _SMALL_TALK_OPENER.sub("", sentence)  # "Yeah, I painted…" → "I painted…"
        if len(said.split()) >= 4 and not _SMALL_TALK.match(said):
            return utf16_cut(said, limit)
    return utf16_cut(sentences[0], limit)


def _keywords(texts: Sequence[str], limit: int) -> list[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        for word in re.findall(r"[A-Za-z][\w+#.-]*[\w+#]|[A-Za-z]", text):
            lowered = word.lower()
            if len(lowered) > 2 and lowered not in _STOPWORDS:
                counts[lowered] += 1
    return [word for word, _count in counts.most_common(limit)]


def names_in(text: str) -> list[str]:
    """Capitalized words that are not sentence openers or calendar words: a guess at people and products."""
    names: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        words = re.findall(r"[A-Za-z][\w'-]*", sentence)
        for word in words:
            clean = word.removesuffix("'s")
            if not clean[:1].isupper() or clean in _NOT_NAMES or clean.lower() in _STOPWORDS:
                continue
            if clean.isupper() and len(clean) > 4:
                continue
            if clean not in names:
                names.append(clean)
    return names


_SUBJECT_VERB = re.compile(
    r"\b([A-Z][a-z]+)(?:'s)?\s+(?:is|was|will|has|had|joined|moved|prefers|likes|finished|owns|leads|starts|"
    r"started|said|wants|asked|agreed|works|lives|left|went|reports)\b")
_SELF_NAME = re.compile(r"\b(?:I'm|I am|my name is)\s+([A-Z][a-z]+)")
_PLACE = re.compile(r"\b(?:based in|lives in|living in|moved to|relocated to)\s+([A-Z][a-z]+)")


def people_in(text: str) -> list[str]:
    """Names used as the subject of a sentence ("Bob joined…", "I'm Dana"): a guess at people."""
    found = [match.group(1) for pattern in (_SELF_NAME, _SUBJECT_VERB) for match in pattern.finditer(text)]
    return [name for name in dict.fromkeys(found) if name not in _NOT_NAMES and not looks_like_tool(name)]


def places_in(text: str) -> list[str]:
    return list(dict.fromkeys(match.group(1) for match in _PLACE.finditer(text)))


def looks_like_tool(name: str) -> bool:
    """Product-style names (inner capitals or digits: PostgreSQL, SQLite, S3) are tools, not people."""
    return bool(re.search(r"[A-Z\d]", name[1:]))


def projects_in(text: str) -> list[str]:
    return list(dict.fromkeys(next(group for group in match.groups() if group) for match in _PROJECT.finditer(text)))


def classify(text: str) -> str | None:
    """The kind of statement (safety, preference, change, decision, plan, identity, fact), or None."""
    if text.rstrip().endswith("?"):
        return None
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return None


def _shifted(base: date, unit: str, step: int) -> str:
    """The week's day, the month (YYYY-MM) or the year (YYYY) `step` units from `base`."""
    if unit == "week":
        return (base + timedelta(days=7 * step)).isoformat()
    if unit == "month":
        months = base.year * 12 + base.month - 1 + step
        return f"{months // 12:04d}-{months % 12 + 1:02d}"
    return f"{base.year + step:04d}"


def split_speaker(text: str) -> tuple[str | None, str]:
    """("Caroline", "I went…") for "Caroline: I went…" (imported transcripts name the speaker); else (None, text)."""
    match = _SPEAKER.match(text)
    if match and match.group(1) not in _NOT_NAMES:
        return match.group(1), match.group(2)
    return None, text


def explicit_date(text: str, mentioned_at: str) -> tuple[str, str] | None:
    """(YYYY-MM-DD, the words that gave it) for the first explicit or relative date in `text`."""
    mentioned = parse_js_date(mentioned_at)
    base = date(1970, 1, 1) + timedelta(milliseconds=mentioned + 8 * 3600 * 1000) if mentioned is not None else None
    found: list[tuple[int, str, str]] = []
    if match := _ISO_DATE.search(text):
        found.append((match.start(), match.group(0), match.group(0)))
    for pattern, month_group, day_group in ((_MONTH_DAY, 1, 2), (_DAY_MONTH, 2, 1)):
        match = pattern.search(text)
        if match:
            year = int(match.group(3)) if match.group(3) else (base.year if base else None)
            if year is None:
                continue
            try:
                value = date(year, _MONTH_NAMES[match.group(month_group).lower()], int(match.group(day_group)))
            except ValueError:
                continue
            found.append((match.start(), value.isoformat(), match.group(0)))
    if base is not None:
        for word, offset in _RELATIVE.items():
            match = re.search(rf"\b{word}\b", text, re.I)
            if match:
                found.append((match.start(), (base + timedelta(days=offset)).isoformat(), match.group(0)))
        for pattern, unit, step in _RELATIVE_PERIODS:
            match = pattern.search(text)
            if match:
                found.append((match.start(), _shifted(base, unit, step), match.group(0)))
    if not found:
        return None
    _position, value, words = min(found)
    return value, words


def summarize(messages: list[Message]) -> BlockSummary:
    """Title from the first user statement, keywords as tags, user statements as key points; always extract."""
    user = [collapse_whitespace(m.content) for m in messages if m.role == "user" and m.content.strip()]
    natural = [collapse_whitespace(m.content) for m in messages if m.role in ("user", "assistant") and m.content.strip()]
    points = [utf16_cut(text, 160) for text in user if classify(text)] or [utf16_cut(text, 160) for text in user[:4]]
    return BlockSummary(
        title=_first_sentence(user[0], 80) if user else "Conversation block",
        tags=_keywords(natural, TAG_LIMIT),
        summary=utf16_cut(" ".join(_first_sentence(text, 200) for text in user[:6]), 500),
        keypoints=points[:8],
        should_extract=True,
    )


def _reply_to(messages: list[Message], index: int) -> Message | None:
    following = messages[index + 1] if index + 1 < len(messages) else None
    return following if following is not None and following.role == "assistant" else None


def _superseded(kind: str, text: str, request: ExtractionRequest, pending: list[dict[str, Any]]) -> list[str]:
    """A change statement replaces the recent earlier event sharing the most words with it (at least two; the
    latest wins a tie). Only the last `RECENT_EVENTS` events are considered: changes refer to recent things."""
    if kind != "change":
        return []
    subject = set(_keywords([text], 12)) | {name.lower() for name in names_in(text)}
    recent = request.timeline[-RECENT_EVENTS:]
    earlier = [(entry.id, entry.title) for entry in recent] + [(e["id"], e["title"]) for e in pending]
    best, best_overlap = None, 1
    for event_id, title in earlier:
        overlap = len(subject & (set(_keywords([title], 12)) | {name.lower() for name in names_in(title)}))
        if overlap >= best_overlap:
            best, best_overlap = event_id, overlap
    return [best] if best else []


def extract(request: ExtractionRequest) -> ExtractionResult:
    """One event per user statement that carries a decision, preference, plan, fact, date or first-person
    experience. A "Name: text" message (an imported transcript) makes Name the speaker."""
    block = request.target
    events: list[dict[str, Any]] = []
    for index, message in enumerate(block.l5_raw):
        if message.role != "user":
            continue
        named, text = split_speaker(collapse_whitespace(message.content))
        speaker = named or "User"
        kind = classify(text)
        when = explicit_date(text, message.created_at)
        if kind is None and when is None:
            continue
        kind = kind or "plan"
        reply = _reply_to(block.l5_raw, index)
        names = names_in(text)
        people = [name for name in people_in(text) if name != speaker]
        temporal: dict[str, Any] = {"mentionedAt": message.created_at, "eventType": kind,
                                    "participants": [speaker, *people][:6]}
        if when is not None:
            precision = {10: "day", 7: "month", 4: "year"}[len(when[0])]
            temporal.update(happenedStart=when[0], precision=precision, basis="explicit", originalText=when[1])
        else:
            temporal.update(precision="unknown", basis="unknown")
        event_id = f"{block.id}:evt:{index}"
        supersedes = _superseded(kind, text, request, events)
        if supersedes:
            temporal["supersedesEventIds"] = supersedes
        events.append({
            "id": event_id,
            "title": _title(text),
            "summary": utf16_cut(text, 500),
            "narrative": utf16_cut(text + (f" Reply: {collapse_whitespace(reply.content)}" if reply else ""), 2000),
            "tags": [kind, *(f"project:{name}" for name in projects_in(text)),
                     *(f"place:{name}" for name in places_in(text)),
                     *(name for name in names if name not in people), *_keywords([text], 4)][:12],
            "quotes": [_title(text, 200)],
            "sourceMessageIds": [message.id] + ([reply.id] if reply else []),
            "temporal": temporal,
            "criticality": _CRITICALITY.get(kind, "routine"),
        })
    # Nothing found is a skip, not a failure: a block of small talk must not make append_turn raise.
    return ExtractionResult(should_extract=bool(events), events=events,
                            reason="" if events else "No decision, preference, plan, fact or date in this block.")


def _event_projects(event: Event) -> list[str]:
    return [tag.removeprefix("project:") for tag in event.tags if tag.startswith("project:")]


def _project_changes(event: Event, known_projects: list[str]) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    kind = event.temporal.event_type or ""
    participants = event.temporal.participants or []
    projects = list(dict.fromkeys([*_event_projects(event), *(name for name in participants if name in known_projects)]))
    if not projects and len(known_projects) == 1 and kind in ("decision", "change", "plan"):
        projects = known_projects
    people = [name for name in participants if name not in projects and name not in known_projects]
    source = {"sourceEventIds": [event.id]}
    valid_from = event.temporal.happened_start or event.temporal.mentioned_at
    for project in projects:
        choice = _CHOICE.search(event.summary)
        if kind in ("decision", "change") and choice:
            changes.append({"name": project, "type": "project", "key": (choice.group(2) or "choice").strip(),
                            "mode": "state", "operation": "set_state", "value": choice.group(1), "validFrom": valid_from, **source})
        elif kind in ("plan", "change") and event.temporal.happened_start:
            key = next((word for word in ("demo", "release", "launch", "deadline", "meeting") if word in event.summary.lower()), "milestone")
            changes.append({"name": project, "type": "project", "key": f"{key}_date", "mode": "state",
                            "operation": "set_state", "value": event.temporal.happened_start, "validFrom": event.temporal.mentioned_at, **source})
        members = [person for person in people if person != "User"]
        if members:
            changes.append({"name": project, "type": "project", "key": "members", "mode": "set",
                            "operation": "add_set_item", "value": members, **source})
    places = [tag.removeprefix("place:") for tag in event.tags if tag.startswith("place:")]
    named = [person for person in people if person != "User"]
    for person in named:
        for place in places[:1]:
            changes.append({"name": person, "type": "person", "key": "based_in", "mode": "relation",
                            "operation": "set_relation", "value": place, "validFrom": valid_from, **source})
        for project in projects:
            changes.append({"name": person, "type": "person", "key": "works_on", "mode": "relation",
                            "operation": "set_relation", "value": project, **source})
    if kind in ("preference", "safety"):
        key = "preferences" if kind == "preference" else "important"
        for owner in named or ["User"]:
            changes.append({"name": owner, "type": "person", "key": key, "mode": "set", "operation": "add_set_item",
                            "value": [event.title], **source})
    return changes


def project(request: ProjectionRequest) -> ProjectionResult:
    """Elements and facts for the people and projects the events name."""
    known = [name for name, element_type in request.element_labels() if element_type == "project"]
    for event in request.events:
        known.extend(name for name in _event_projects(event) if name not in known)
    changes = [change for event in request.events for change in _project_changes(event, known)]
    return ProjectionResult(changes, f"Projected {len(changes)} entity changes." if changes else
                            "No named people or projects in these events.")


def engine_options() -> dict[str, Any]:
    """`summarizer`, `extractor`, `projector` keyword arguments for `stratagate.open` / `in_memory`."""
    return {"summarizer": summarize, "extractor": extract, "projector": project}
