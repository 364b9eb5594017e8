"""Every limit the reference accepts gives the reference's number of hits (store.ts: searchEvents and
searchElements slice to `Math.max(1, Math.min(max, limit ?? default))`; searchRawMemory stops once it holds
`limit` hits, checked after each one). The differential oracles (tests/differential) pin the same edges against
the reference's recorded answers."""

from __future__ import annotations

import math

import pytest

from tests.core.helpers import reference_memory

NAN, INF = math.nan, math.inf


@pytest.fixture(scope="module")
def memory():
    return reference_memory()


@pytest.mark.parametrize(("limit", "expected"), [(0, 1), (-1, 1), (1, 1), (2.5, 3), (0.5, 1), (-INF, 1), (50, 32),
                                                 (NAN, 32), (INF, 32), (None, 6)])
def test_raw_memory_limit_edges(memory, limit, expected):
    hits = memory.search_raw_memory("the", limit)
    assert len(hits) == expected
    assert hits == memory.search_raw_memory("the", INF)[:expected]


@pytest.mark.parametrize(("limit", "expected"), [(0, 1), (-1, 1), (1.9, 1), (2.5, 2), (50, 11), (20.5, 11),
                                                 (INF, 11), (-INF, 1), (NAN, 0), (None, 6)])
def test_event_limit_edges(memory, limit, expected):
    hits = memory.search_events("", limit=limit)
    assert len(hits) == expected
    assert [hit.event.id for hit in hits] == [hit.event.id for hit in memory.search_events("", limit=20)][:expected]


@pytest.mark.parametrize(("limit", "expected"), [(0, 1), (-1, 1), (2.5, 2), (50, 12), (INF, 12), (NAN, 0),
                                                 (None, 8)])
def test_element_limit_edges(memory, limit, expected):
    hits = memory.search_elements("Atlas", limit=limit)
    assert len(hits) == expected
    assert [hit.fact.id for hit in hits] == [hit.fact.id for hit in memory.search_elements("Atlas", limit=12)][:expected]


def test_a_nan_limit_still_explains_every_cut(memory):
    hits = memory.search_events("", limit=NAN, explain=True)
    assert len(hits) == 0
    assert sum(reason.reason.startswith("cut by limit 0") for reason in hits.explanation.excluded) == 11
