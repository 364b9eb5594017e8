"""Recall helpers used by bench/locomo.py: recall@k and the message → dia_id mapping."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stratagate.importers.locomo import read_locomo_file
from stratagate.importers.locomo_recall import TurnIndex, recall_at_k

SMALL = Path(__file__).parents[1] / "importers" / "small-locomo.json"


def test_recall_counts_evidence_in_the_first_k_distinct_ids():
    ranked = ["D1:1", "D1:1", "D2:2", "D1:3", "D2:1"]
    assert recall_at_k(["D1:3", "D2:1"], ranked, 2) == 0.0
    assert recall_at_k(["D1:3", "D2:1"], ranked, 3) == 0.5  # the repeat of D1:1 takes no slot
    assert recall_at_k(["D1:3", "D2:1"], ranked, 4) == 1.0
    assert recall_at_k(["D9:9"], [], 10) == 0.0
    with pytest.raises(ValueError):
        recall_at_k([], ranked, 5)


@given(
    evidence=st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1),
    ranked=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"])),
    k=st.integers(min_value=1, max_value=8),
)
def test_recall_is_a_share_and_never_drops_as_k_grows(evidence, ranked, k):
    assert 0.0 <= recall_at_k(evidence, ranked, k) <= recall_at_k(evidence, ranked, k + 1) <= 1.0


def test_turn_index_maps_messages_by_their_instant():
    [conversation] = read_locomo_file(SMALL)
    index = TurnIndex(conversation)
    third = conversation.turns[2]
    assert index.add_message("msg_3", third.created_at.isoformat(timespec="milliseconds")) == "D1:3"
    assert index.add_message("msg_x", third.created_at + timedelta(hours=1)) is None
    assert index.dia_ids(["msg_x", "msg_3", "msg_3"]) == ["D1:3"]
