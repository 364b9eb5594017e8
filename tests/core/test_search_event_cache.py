"""Event search keeps each event's filter and sort inputs cached and updates them on every write: after any
sequence of adds and curations, searches must equal those of a fresh `Retrieval` that derives everything from
the current events, and a search without `explain` must equal the head of the same search with it (the
limited paths fuse and sort only the top hits)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

import stratagate
from stratagate.event_cache import EventSearchCache
from stratagate.retrieval import Retrieval
from tests.core.helpers import Clock
from tests.property_budget import examples

WORDS = ["budget", "launch", "Launch", "meeting", "trip", "数据库", "会议"]
NAMES = ["Alice", "alice smith", "Bob", "  BOB ", "张伟"]
TYPES = ["meeting", "Meeting notes", "demo", "release", None]
DAYS = ["2025-01-03", "2025-01-10", "2025-02-01", "2025-01-10T12:00:00Z", "someday", None]

_event = st.fixed_dictionaries({
    "title": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    "tags": st.lists(st.sampled_from(WORDS), max_size=2),
    "participants": st.lists(st.sampled_from(NAMES), max_size=2),
    "eventType": st.sampled_from(TYPES),
    "happenedStart": st.sampled_from(DAYS),
    "happenedEnd": st.sampled_from(DAYS),
    "criticality": st.sampled_from(["routine", "preference", "identity"]),
})
_operation = st.one_of(
    st.tuples(st.just("add"), _event),
    st.tuples(st.sampled_from(["forget", "restore", "archive", "pin", "unpin", "unsupersede", "use", "record"]),
              st.integers(0, 4)),
    st.tuples(st.just("supersede"), st.tuples(st.integers(0, 4), st.integers(0, 4))),
    st.tuples(st.just("turn"), st.just(None)),
)
_query = st.tuples(
    st.sampled_from(["", "launch", "meeting budget", "会议"]),
    st.fixed_dictionaries({}, optional={
        "participants": st.lists(st.sampled_from(["alice", "BOB", "张", "Carol"]), min_size=1, max_size=2),
        "event_type": st.sampled_from(["meeting", "Meet", "budget", "nothing"]),
        "happened_from": st.sampled_from(["2025-01-01", "2025-01-10", "garbage"]),
        "happened_to": st.sampled_from(["2025-01-09", "2025-03-01"]),
        "temporal_intent": st.sampled_from(["first", "latest", "other"]),
        "limit": st.sampled_from([1, 2, 6]),
    }),
)


def _apply(memory: stratagate.StrataGate, operation: tuple, block_id: str, clock: Clock) -> None:
    action, argument = operation
    clock.advance(minutes=1)
    ids = [event.id for event in memory.list_events()]
    if action == "add":
        memory.add_event(argument["title"], "summary", source_block_id=block_id, tags=argument["tags"],
                         criticality=argument["criticality"],
                         temporal={key: argument[key] for key in ("participants", "eventType", "happenedStart",
                                                                  "happenedEnd") if argument[key] is not None})
    elif action == "turn":
        memory.append_turn("another turn", "reply")
    elif not ids:
        return
    elif action == "supersede":
        old, new = (ids[position % len(ids)] for position in argument)
        if old != new:
            memory.supersede_event(old, new)
    elif action == "use":
        memory.record_memory_use(event_ids=[ids[argument % len(ids)]], receipt_id=f"receipt {clock.now}")
    elif action == "record":
        memory.search_events(WORDS[argument % len(WORDS)], record=True)
    else:
        event_id = ids[argument % len(ids)]
        {"forget": memory.forget_event, "restore": memory.restore_event, "archive": memory.archive_event,
         "pin": memory.pin_event, "unpin": memory.unpin_event, "unsupersede": memory.unsupersede_event}[action](event_id)


def _hits(hits: list) -> list[tuple[str, float]]:
    return [(hit.id, hit.score) for hit in hits]


@settings(max_examples=examples(100), deadline=None)
@given(operations=st.lists(_operation, max_size=25), queries=st.lists(_query, min_size=1, max_size=4))
# Found by hypothesis: soft filters fuse two structured rankings, so neither may be cut to the limit.
@example(operations=[("add", {"title": "budget", "tags": [], "participants": [], "eventType": "meeting",
                              "happenedStart": start, "happenedEnd": "2025-01-03", "criticality": "routine"})
                     for start in ("2025-01-03", "2025-01-10")],
         queries=[("", {"participants": ["alice"], "limit": 1, "event_type": "meeting",
                        "happened_to": "2025-01-09"})])
def test_cached_event_search_equals_a_fresh_retrieval_after_writes(operations, queries):
    clock = Clock("2026-03-02T01:00:00Z", step=timedelta(0))
    memory = stratagate.in_memory(block_turn_size=1, now=clock)
    memory.append_turn("first turn", "reply")
    block_id = memory.list_blocks()[0].id
    memory.search_events("", event_type="meeting")  # builds the caches, so the writes below update them
    for operation in operations:
        _apply(memory, operation, block_id, clock)
        query, options = queries[0]
        memory.search_events(query, **options)
    fresh = Retrieval(memory)
    for query, options in queries:
        cached = memory.search_events(query, **options)
        explained = memory.search_events(query, explain=True, **options)
        rebuilt = fresh.search_events(query, explain=True, **options)
        assert _hits(cached) == _hits(explained) == _hits(rebuilt)
        assert [hit.explanation for hit in explained] == [hit.explanation for hit in rebuilt]
        assert explained.explanation == rebuilt.explanation


def test_a_restored_event_keeps_its_place_among_tied_candidates():
    memory = stratagate.in_memory(block_turn_size=1)
    memory.append_turn("first turn", "reply")
    block_id = memory.list_blocks()[0].id
    ids = [memory.add_event(f"card {number}", source_block_id=block_id,
                            temporal={"happenedStart": "2025-01-01"}).id for number in range(3)]
    assert [hit.id for hit in memory.search_events("", temporal_intent="first")] == ids
    memory.forget_event(ids[0])
    assert [hit.id for hit in memory.search_events("", temporal_intent="first")] == ids[1:]
    memory.restore_event(ids[0])
    # Equal chronology: the events' order decides, and the restored event never left it.
    assert [hit.id for hit in memory.search_events("", temporal_intent="first")] == ids


def test_a_deleted_event_leaves_the_candidates():
    memory = stratagate.in_memory(block_turn_size=1)
    memory.append_turn("first turn", "reply")
    block_id = memory.list_blocks()[0].id
    events = [memory.add_event(f"card {number}", source_block_id=block_id) for number in range(3)]
    cache = EventSearchCache(events)
    assert cache.candidate_ids() == [event.id for event in events]
    cache.update(events[1].id, None)
    assert cache.candidate_ids() == [events[0].id, events[2].id]
    cache.update(events[1].id, events[1])  # back at the end, as a dict re-insertion puts it
    assert cache.candidate_ids() == [events[0].id, events[2].id, events[1].id]


def test_soft_filters_fuse_every_structured_ranking_in_full():
    """No event matches every filter, so each filter ranks its matches and RRF fuses them: the early event,
    second by eventType (the later-updated card leads on equal weight) and first by happened range, scores
    1/62 + 1/61 and wins, even at limit 1."""
    memory = stratagate.in_memory(block_turn_size=1, now=Clock(step=timedelta(minutes=1)))
    memory.append_turn("first turn", "reply")
    block_id = memory.list_blocks()[0].id
    early = memory.add_event("budget", source_block_id=block_id,
                             temporal={"eventType": "meeting", "happenedStart": "2025-01-03"})
    memory.add_event("budget", source_block_id=block_id,
                     temporal={"eventType": "meeting", "happenedStart": "2025-01-10"})
    options = {"participants": ["alice"], "event_type": "meeting", "happened_to": "2025-01-09"}
    [hit] = memory.search_events("", limit=1, **options)
    assert hit.id == early.id and hit.score == 1 / 61 + 1 / 62
    assert [(h.id, h.score) for h in memory.search_events("", limit=6, **options)][:1] == [(hit.id, hit.score)]
