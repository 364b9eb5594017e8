"""The what-if base λ of `memory_weight_at`: the default is exactly the engine's curve, and an override only
changes the decay rate (floors, caps, pins and forgetting still apply)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from stratagate.model import EventWeight
from stratagate.weights import BASE_LAMBDA, memory_weight_at, weight_at


@dataclass
class Memory:
    weight: EventWeight
    status: str = "active"


weights = st.builds(
    EventWeight,
    mention_count=st.integers(0, 50),
    last_adopted_turn=st.integers(0, 200),
    floor_weight=st.sampled_from([0.0, 0.3, 0.9, 1.0]),
    pinned=st.booleans(),
    forced_cap=st.sampled_from([None, 0.1]),
)


@given(weights, st.sampled_from(["active", "superseded", "forgotten", "archived"]), st.integers(0, 400))
def test_the_default_is_the_engine_curve_bit_for_bit(weight, status, turn):
    memory = Memory(weight, status)
    assert memory_weight_at(memory, turn) == memory_weight_at(memory, turn, BASE_LAMBDA) == weight_at(weight, status, turn)


@given(st.integers(1, 50), st.integers(0, 100), st.floats(0.0, 2.0))
def test_an_override_changes_only_the_rate(mentions, elapsed, base):
    memory = Memory(EventWeight(mention_count=mentions, last_adopted_turn=10))
    expected = math.exp(-base / (1 + 1.5 * math.log(mentions)) * elapsed)
    assert memory_weight_at(memory, 10 + elapsed, base) == expected


def test_floors_caps_pins_and_forgetting_still_apply():
    floor = Memory(EventWeight(floor_weight=0.3))
    assert memory_weight_at(floor, 1_000, 2.0) == 0.3
    capped = Memory(EventWeight(forced_cap=0.1), "superseded")
    assert memory_weight_at(capped, 0, 0.0) == 0.1
    assert memory_weight_at(Memory(EventWeight(pinned=True)), 1_000, 2.0) == 1.0
    assert memory_weight_at(Memory(EventWeight(), "forgotten"), 0, 0.0) == 0.0
