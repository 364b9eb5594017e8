"""`search_raw_memory` reads only the blocks the storage names as possible matches: its answers must be those
of the reference's scan (every sealed message in block order, tokenized, first `limit` sharing a token)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratagate
from stratagate.search.tokenize import search_tokens
from tests.property_budget import examples

# ASCII words in any case, and text whose NFKC or ICU case mapping differs from SQL's: accented capitals, a
# fullwidth word, a ligature, Han runs, a typographic apostrophe.
WORDS = ["sazen", "Sazen", "SAZEN", "velta", "tu", "É", "é", "café", "CAFÉ", "Ｓazen", "ﬁle", "file", "中文",
         "文字", "中", "it’s", "it's", "don't", "a-b", "x1"]
texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
turns = st.lists(st.tuples(texts, texts), min_size=1, max_size=5)
queries = st.lists(st.sampled_from(WORDS + ["zzz", "SAZEN file", "文"]), min_size=0, max_size=2).map(" ".join)
limits = st.sampled_from([1, 2, 3, 6, 0, -1, 2.5, math.inf, math.nan])


def scan(memory: stratagate.StrataGate, query: str, limit: float) -> list[tuple]:
    """The reference's raw search, over every block loaded."""
    wanted = set(search_tokens(query))
    hits: list[tuple] = []
    if not wanted:
        return hits
    for block in sorted(memory.list_blocks(), key=lambda block: block.sequence):
        for position, message in enumerate(block.l5_raw):
            if wanted & set(search_tokens(message.content)):
                nearby = [other.id for other in block.l5_raw[max(0, position - 1) : position + 2]]
                hits.append((block.id, block.turn_range, message.id, nearby))
                if len(hits) >= limit:
                    return hits
    return hits


def answers(memory: stratagate.StrataGate, query: str, limit: float) -> list[tuple]:
    return [(hit.block_id, hit.turn_range, hit.message.id, [other.id for other in hit.nearby])
            for hit in memory.search_raw_memory(query, limit)]


def build(memory: stratagate.StrataGate, conversation: list[tuple[str, str]]) -> None:
    for user, assistant in conversation:
        memory.append_turn(user, assistant)
    memory.append_turn("open tail, never searched: sazen 中文", "café")


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conversation=turns, query=queries, limit=limits)
def test_sqlite_raw_search_is_the_reference_scan(tmp_path: Path, conversation, query, limit):
    path = tmp_path / f"raw-{abs(hash((tuple(conversation), query)))}.sqlite"
    path.unlink(missing_ok=True)
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        build(memory, conversation)
        assert answers(memory, query, limit) == scan(memory, query, limit)
    with stratagate.open(path, "ns", read_only=True) as reader:  # cold: nothing loaded before the search
        found = answers(reader, query, limit)
        assert found == scan(reader, query, limit)


@settings(max_examples=examples(60), deadline=None)
@given(conversation=turns, query=queries, limit=limits)
def test_in_memory_raw_search_is_the_reference_scan(conversation, query, limit):
    memory = stratagate.in_memory(block_turn_size=1)
    build(memory, conversation)
    assert answers(memory, query, limit) == scan(memory, query, limit)


@pytest.mark.parametrize("query", ["sazen", "CAFÉ", "中文", "ＳＡＺＥＮ", "file"])
def test_case_and_compatibility_forms_are_found(tmp_path: Path, query):
    path = tmp_path / "forms.sqlite"
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        build(memory, [("SAZEN", "Café"), ("Ｓazen", "ﬁle"), ("中文字", "plain")])
    with stratagate.open(path, "ns", read_only=True) as reader:
        found = answers(reader, query, math.inf)
        assert found and found == scan(reader, query, math.inf)
