"""Random scenarios for the differential check against the TypeScript reference.

A scenario is plain JSON that tests/differential/driver.mjs plays through the reference's public API: two
namespaces, each with turns in three threads (texts in English, Han, Japanese, Korean, Thai, Arabic, Cyrillic,
emoji with ZWJ sequences and NFKC-sensitive forms), the summaries, extracted events (dated in ~45 forms, with
participants, event types and supersession chains) and element changes its fake callbacks return, some
curation (pin, forget, restore, memory use), then the calls to compare: event, element and raw-memory searches
with filters and every limit edge, and element expansions at dates. The same seed always gives the same scenario.
"""

from __future__ import annotations

import random
from typing import Any

WORDS = {
    "english": ["database", "migration", "deploy", "Atlas", "release", "budget", "meeting", "Berlin", "storage",
                "backend", "frontend", "review", "launch", "invoice", "pottery", "garden", "tomatoes", "running",
                "the", "a", "we", "decided", "moved", "postgres", "PostgreSQL", "API", "v2.1", "e-mail", "don't"],
    "han": ["数据库", "迁移", "北京", "会议", "项目", "预算", "发布", "我们决定使用", "上海的办公室", "测试"],
    "japanese": ["東京", "会議", "データベース", "リリース", "さくら", "予算", "移行しました", "カタカナ", "ｶﾀｶﾅ"],
    "korean": ["서울", "회의", "데이터베이스", "출시", "예산", "민준", "이전했습니다"],
    "thai": ["กรุงเทพ", "ประชุม", "ฐานข้อมูล", "งบประมาณ", "เปิดตัว", "สมชาย"],
    "arabic": ["القاهرة", "اجتماع", "قاعدة البيانات", "ميزانية", "محمد", "إطلاق"],
    "cyrillic": ["Москва", "встреча", "база данных", "бюджет", "Иван", "релиз", "Ёлка", "ёлка"],
    "emoji": ["🚀", "👩\u200d💻", "👨\u200d👩\u200d👧", "🇩🇪", "✅", "🔥deploy", "❤️", "👍🏽"],
    "nfkc": ["ﬁle", "Ｆｕｌｌｗｉｄｔｈ", "①", "㎏", "\u212b", "e\u0301", "Ⅸ", "ｄａｔａｂａｓｅ", "ＡＴＬＡＳ", "ß", "İstanbul"],
}
PEOPLE = ["Alice", "alice", "Bob", "王伟", "さくら", "민준", "Иван", "محمد", "สมชาย", "José", "JOSE", "Zoë"]
EVENT_TYPES = ["meeting", "decision", "Deploy", "会议", "incident", "travel", "release", "決定"]
ELEMENTS = [("Atlas", "project"), ("atlas", "project"), ("Alice", "person"), ("王伟", "person"),
            ("Berlin", "place"), ("東京", "place"), ("PostgreSQL", "tool"), ("Acme Corp", "organization"),
            ("Москва", "place"), ("🚀 Rocket", "project"), ("ＡＴＬＡＳ", "project")]
FACT_KEYS = {"state": ["status", "owner", "stage", "location"], "set": ["members", "tags", "tools"],
             "relation": ["works_on", "located_in", "uses"]}
OPERATIONS = {"state": "set_state", "set": "add_set_item", "relation": "set_relation"}
THREADS = [None, "thread-a", "スレッド"]
LIMITS = [None, None, 0, -1, 1, 2, 2.5, 0.5, 6, 20, 50, "NaN", "Infinity", "-Infinity"]

# ~45 ways agents write dates: ES5 ISO forms, legacy forms V8 reads, and forms it gives NaN for.
DATE_FORMS = [
    "{Y}-{M}-{D}", "{Y}-{M}-{D}T{h}:{m}:00Z", "{Y}-{M}-{D}T{h}:{m}:00.000+08:00", "{Y}-{M}-{D}T{h}:{m}",
    "{Y}-{M}-{D}T{h}:{m}:{s}.5-05:00", "{Y}-{M}", "{Y}", "{Y}-{M}-{D} {h}:{m}", "{Y}/{M}/{D}", "{Y}.{M}.{D}",
    "{month} {d}, {Y}", "{d} {mon} {Y}", "{mon} {d}", "{month} {Y}", "{n}/{d}/{Y}", "{M}/{D}/{Y} {h12}:{m} PM",
    "{D}.{M}.{Y}", "{d}-{mon}-{Y}", "{Y} {month} {d}", "Spring {Y}", "{Y}-02-30", "{Y}-{M}-31",
    "{wd}, {D} {mon} {Y} {h}:{m}:{s} GMT", "{wd} {mon} {D} {Y} {h}:{m}:{s} GMT+0800 (China Standard Time)",
    "{mon} {d} {Y} {h}:{m} EST", "{mon} {d} {Y} {h}:{m} (CET)", "{Y}-{M}-{D}T24:00", "+00{Y}-{M}-{D}",
    "{Y}-{n}-{d}", "{Y}{M}{D}", "{Y}-{M}-{D}T{h}:{m}:00 GMT+0800", "{month} {d}st, {Y}", "{month} {d}th {Y}",
    "+25:00", "0", "12", "yesterday", "", "{Y}年{n}月{d}日", "{d} марта {Y}", "{h}:{m} {mon} {d} {Y}",
    "{mon} {d} {Y} {h}:{m} GMT+8", "{Y}-{M}-{D}T{h}:{m}:00+25:00", "{mon}. {d}, {Y}", "{Y}-{M}-{D}Z",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def date_text(rng: random.Random) -> str:
    """A date in one of the forms, around 2025-2027."""
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    hour, minute = rng.randint(0, 23), rng.choice([0, 15, 30, 45])
    return rng.choice(DATE_FORMS).format(
        Y=rng.choice([2025, 2026, 2026, 2027]), M=f"{month:02d}", D=f"{day:02d}", n=month, d=day,
        h=f"{hour:02d}", m=f"{minute:02d}", s=f"{rng.randint(0, 59):02d}", h12=rng.randint(1, 12),
        month=MONTHS[month - 1], mon=MONTHS[month - 1][:3], wd=rng.choice(WEEKDAYS))


def _words(rng: random.Random, count: int) -> list[str]:
    scripts = list(WORDS)
    return [rng.choice(WORDS[rng.choice(scripts)]) for _ in range(count)]


def _sentence(rng: random.Random, low: int = 3, high: int = 12) -> str:
    return " ".join(_words(rng, rng.randint(low, high)))


class _Ids:
    """Event ids in one namespace's style: counters, UUID-shaped or mixed case."""

    def __init__(self, rng: random.Random, style: str):
        self.rng, self.style, self.count = rng, style, 0

    def next(self) -> str:
        self.count += 1
        if self.style == "uuid":
            hexes = "".join(self.rng.choice("0123456789abcdef") for _ in range(32))
            return f"evt_{hexes[:8]}-{hexes[8:12]}-4{hexes[13:16]}-a{hexes[17:20]}-{hexes[20:]}"
        if self.style == "mixed":
            return f"{self.rng.choice(['evt', 'EVT', 'Evt'])}_{self.rng.choice(['a', 'B', 'c'])}{self.count}"
        return f"evt_{self.count}"


def _event(rng: random.Random, event_id: str, earlier: list[str]) -> dict[str, Any]:
    temporal: dict[str, Any] = {}
    if rng.random() < 0.8:
        temporal["happenedStart"] = date_text(rng)
    if rng.random() < 0.4:
        temporal["happenedEnd"] = date_text(rng)
    if rng.random() < 0.5:
        temporal["mentionedAt"] = date_text(rng)
    if rng.random() < 0.7:
        temporal["participants"] = rng.sample(PEOPLE, rng.randint(1, 3))
    if rng.random() < 0.7:
        temporal["eventType"] = rng.choice(EVENT_TYPES)
    if earlier and rng.random() < 0.3:
        # Supersession chains: usually the latest events, sometimes an id that never existed.
        temporal["supersedesEventIds"] = [rng.choice(earlier[-3:])] + (["evt_missing"] if rng.random() < 0.1 else [])
    if rng.random() < 0.3:
        temporal["originalText"] = _sentence(rng, 2, 5)
    return {
        "id": event_id,
        "title": _sentence(rng, 2, 6),
        "summary": _sentence(rng, 4, 14),
        "narrative": _sentence(rng, 0, 10),
        "tags": _words(rng, rng.randint(0, 4)),
        "quotes": [_sentence(rng, 2, 5) for _ in range(rng.randint(0, 2))],
        "sourceMessageIds": [],
        "temporal": temporal,
        "scope": rng.choice(["user", "project", "session"]),
        "criticality": rng.choice(["routine", "routine", "preference", "identity", "safety"]),
        "confidence": rng.choice([1, 0.9, 0.5]),
    }


TOOL_RESULTS = [1, 1.0, 0.1 + 0.2, 1e21, -0.0, 123456789012, True, None, "ok", "", [1, "two", None],
                {"rows": 3, "status": "done"}, {"nested": {"deep": [1.5, {"x": "y"}]}}, "line one\nline two"]


def _tool_call(rng: random.Random) -> dict[str, Any]:
    call: dict[str, Any] = {"name": rng.choice(["search", "read_file", "run_sql", "天気", "🔧fix"])}
    if rng.random() < 0.7:
        call["arguments"] = {"query": _sentence(rng, 1, 3), "limit": rng.choice([1, 5, 2.5])}
    if rng.random() < 0.8:
        call["result"] = rng.choice(TOOL_RESULTS + [_sentence(rng, 3, 30)])
    return call


def _changes(rng: random.Random, event_id: str) -> list[dict[str, Any]]:
    changes = []
    for _ in range(rng.randint(0, 3)):
        name, element_type = rng.choice(ELEMENTS)
        mode = rng.choice(["state", "state", "set", "relation"])
        value: Any = rng.sample(PEOPLE + _words(rng, 3), 2) if mode == "set" and rng.random() < 0.5 else _sentence(rng, 1, 3)
        change = {"element": {"name": name, "type": element_type, "aliases": rng.sample(["Project A", "ATLAS", "アトラス"], rng.randint(0, 1))},
                  "operation": OPERATIONS[mode], "key": rng.choice(FACT_KEYS[mode]), "mode": mode, "value": value,
                  "sourceEventIds": [event_id]}
        if rng.random() < 0.6:
            change["validFrom"] = date_text(rng)
        if rng.random() < 0.3:
            change["validTo"] = date_text(rng)
        if rng.random() < 0.5:
            change["confidence"] = rng.choice([0.3, 0.8, 1])
        changes.append(change)
    return changes


def _calls(rng: random.Random, event_ids: list[str]) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def query() -> str:
        return rng.choice(["", " ", "?!", "🚀", "a", _sentence(rng, 1, 1), _sentence(rng, 1, 3), _sentence(rng, 2, 5),
                           _sentence(rng, 1, 2).upper(), _sentence(rng, 8, 20)])

    def limit(options: dict[str, Any]) -> dict[str, Any]:
        value = rng.choice(LIMITS)
        return options if value is None else {**options, "limit": value}

    for _ in range(50):
        options: dict[str, Any] = {}
        if rng.random() < 0.3:
            options["participants"] = rng.sample(PEOPLE + ["", " ", "ali"], rng.randint(1, 2))
        if rng.random() < 0.3:
            options["eventType"] = rng.choice(EVENT_TYPES + ["nothing-matches", "", " ", "MEET"])
        if rng.random() < 0.3:
            options["happenedFrom"] = date_text(rng)
        if rng.random() < 0.3:
            options["happenedTo"] = date_text(rng)
        if rng.random() < 0.3:
            options["temporalIntent"] = rng.choice(["first", "latest", True, False])
        calls.append({"kind": "searchEvents", "query": query(), "options": limit(options)})
    for _ in range(30):
        options = {}
        if rng.random() < 0.3:
            options["name"] = rng.choice([name for name, _type in ELEMENTS] + ["nobody", "", " ", "atl"])
        if rng.random() < 0.3:
            options["type"] = rng.choice(["person", "project", "organization", "tool", "place", "planet"])
        calls.append({"kind": "searchElements", "query": query(), "options": limit(options)})
    for _ in range(20):
        call = {"kind": "searchRawMemory", "query": query()}
        value = rng.choice(LIMITS)
        if value is not None:
            call["limit"] = value
        calls.append(call)
    for _ in range(20):
        call = {"kind": "expandElement", "elementName": rng.choice(ELEMENTS)[0]}
        if rng.random() < 0.8:
            call["at"] = date_text(rng)
        calls.append(call)
    return calls


def _namespace(rng: random.Random, name: str) -> dict[str, Any]:
    ids = _Ids(rng, rng.choice(["counter", "uuid", "mixed"]))
    block_turn_size = rng.choice([1, 2, 2, 3])
    turns = rng.randint(20, 36)
    steps: list[dict[str, Any]] = []
    event_ids: list[str] = []
    extractions: dict[str, Any] = {}
    projections: dict[str, Any] = {}
    for sequence in range(1, turns + 1):
        events = []
        for _ in range(rng.randint(0, 4)):
            event_id = ids.next()
            events.append(_event(rng, event_id, event_ids))
            projections[event_id] = _changes(rng, event_id)
            event_ids.append(event_id)
        extractions[str(sequence)] = {"shouldExtract": bool(events), "reason": "planned", "events": events}
    for index in range(turns):
        turn: dict[str, Any] = {"user": _sentence(rng), "assistant": _sentence(rng, 3, 20)}
        thread = rng.choice(THREADS)
        if thread:
            turn["threadId"] = thread
        if rng.random() < 0.3:
            turn["createdAt"] = f"2026-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
        for side in ("userToolCalls", "assistantToolCalls"):
            if rng.random() < 0.15:
                turn[side] = [_tool_call(rng) for _ in range(rng.randint(1, 2))]
        steps.append({"op": "turn", "turn": turn})
        if event_ids and rng.random() < 0.25:
            op = rng.choice(["pin", "forget", "restore", "use"])
            target = rng.choice(event_ids[: max(1, index * 2)])
            if op == "use":
                steps.append({"op": "use", "eventIds": [target], "receiptId": f"use-{index}",
                              "elementNames": rng.sample([name for name, _type in ELEMENTS], 1)})
            else:
                steps.append({"op": op, "id": target, "pinned": rng.random() < 0.8})
    summaries = [{"l0Title": _sentence(rng, 2, 5), "l0Tags": _words(rng, rng.randint(0, 3)),
                  "l1Summary": _sentence(rng, 5, 15), "l2Keypoints": [_sentence(rng, 2, 6) for _ in range(2)],
                  "shouldExtract": rng.random() < 0.85} for _ in range(turns)]
    return {"namespace": name, "blockTurnSize": block_turn_size, "idStyle": ids.style,
            "idSeed": rng.randrange(2**31), "start": f"2026-03-01T{rng.randint(0, 23):02d}:00:00Z",
            "steps": steps, "summaries": summaries, "extractions": extractions, "projections": projections,
            "calls": _calls(rng, event_ids)}


def scenario(seed: int) -> dict[str, Any]:
    """The scenario for `seed`: two namespaces in one SQLite file."""
    rng = random.Random(seed)
    return {"seed": seed, "namespaces": [_namespace(rng, f"agent:{seed}:alpha"), _namespace(rng, "project:ß-β")]}
