"""On the reference fixture, every oracle search/expand call gives the reference's ids, order and scores."""

from __future__ import annotations

import pytest

from tests.core.helpers import reference_memory, reference_oracle
from tests.differential.compare import options as _options

ORACLE = reference_oracle()


def _calls(kind: str) -> list[dict]:
    return [call for call in ORACLE["oracle"] if call["kind"] == kind]


@pytest.fixture(scope="module")
def memory():
    return reference_memory()


@pytest.mark.parametrize("call", _calls("searchEvents"), ids=lambda c: f"{c['query']!r}-{c.get('options')}")
def test_search_events_matches_oracle(memory, call):
    hits = memory.search_events(call["query"], **_options(call))
    assert [hit.event.id for hit in hits] == [row["id"] for row in call["result"]]
    for hit, row in zip(hits, call["result"], strict=True):
        assert hit.score == pytest.approx(row["score"], abs=1e-12)


@pytest.mark.parametrize("call", _calls("searchElements"), ids=lambda c: f"{c['query']!r}-{c.get('options')}")
def test_search_elements_matches_oracle(memory, call):
    hits = memory.search_elements(call["query"], **_options(call))
    assert [(hit.fact.id, hit.element.id) for hit in hits] == [(row["factId"], row["elementId"]) for row in call["result"]]
    for hit, row in zip(hits, call["result"], strict=True):
        assert hit.score == pytest.approx(row["score"], abs=1e-12)
        assert (hit.fact.status, hit.fact.value) == (row["status"], row["value"])


@pytest.mark.parametrize("call", _calls("expandElement"), ids=lambda c: f"{c['id']}@{c.get('at')}")
def test_expand_element_matches_oracle(memory, call):
    view = memory.expand_element(call["id"], call.get("at"))
    expected = call["result"]
    assert view.current_state == expected["currentState"]
    assert [(fact.id, fact.status, fact.valid_from, fact.valid_to) for fact in view.facts] == [
        (fact["id"], fact["status"], fact["validFrom"], fact["validTo"]) for fact in expected["facts"]]


@pytest.mark.parametrize("call", _calls("searchRawMemory"), ids=lambda c: c["query"])
def test_search_raw_memory_matches_oracle(memory, call):
    hits = memory.search_raw_memory(call["query"], call["limit"])
    assert [(hit.block_id, list(hit.turn_range), hit.message.id, [m.id for m in hit.nearby]) for hit in hits] == [
        (row["blockId"], row["turnRange"], row["messageId"], [m["id"] if isinstance(m, dict) else m for m in row["nearby"]])
        for row in call["result"]]


def test_weights_at_current_turn_match(memory):
    for event_id, weight in ORACLE["eventWeightsAtCurrentTurn"].items():
        assert memory.event_weight(event_id) == pytest.approx(weight, abs=1e-12)
    for element_id, weight in ORACLE["elementWeightsAtCurrentTurn"].items():
        assert memory.element_weight(element_id) == pytest.approx(weight, abs=1e-12)


def test_block_context_follows_v7_not_the_v5_oracle(memory):
    v5_levels = [row["level"] for row in _calls("getBlockContext")[0]["result"]]
    entries = memory.get_block_context()
    assert v5_levels == [3, 3, 5]
    # v7: blk_25 was lifted to L3 when blk_82 was the latest block (age 0); blk_50 is 1 block old: still L5.
    assert [(entry.id, entry.level, entry.age) for entry in entries] == [("blk_25", 3, 2), ("blk_50", 5, 1),
                                                                        ("blk_82", 5, 0)]
    assert entries[0].label == "L3 rule-condensed transcript"


def test_searches_do_not_write(memory):
    revision = memory.revision
    retrieved = memory.get_event("evt_83").weight.last_retrieved_at
    memory.search_events("database storage")
    memory.search_elements("Atlas team members")
    assert memory.revision == revision
    assert memory.get_event("evt_83").weight.last_retrieved_at == retrieved
