"""Event (and element) decay weights: max(floor, exp(−λ(n)·Δturns)), λ(n) = 0.15 / (1 + 1.5·ln n)."""

from __future__ import annotations

import math

from stratagate.model import EventWeight

CRITICALITY_FLOORS = {"routine": 0.0, "preference": 0.3, "identity": 0.9, "safety": 1.0}
SUPERSEDED_CAP = 0.1
BASE_LAMBDA = 0.15


def criticality_floor(criticality: str) -> float:
    return CRITICALITY_FLOORS.get(criticality, 0.0)


def decay_lambda(mention_count: int, base_lambda: float = BASE_LAMBDA) -> float:
    """More mentions decay more slowly. `base_lambda` replaces 0.15 for a what-if (the engine never does)."""
    return base_lambda / (1 + 1.5 * math.log(max(1, mention_count)))


def weight_at(weight: EventWeight, status: str, turn: int, base_lambda: float = BASE_LAMBDA) -> float:
    """The weight of a memory at a global turn: 0 if forgotten/archived, 1 if pinned, else decayed and capped.
    `base_lambda` overrides the base decay rate for a what-if."""
    if status in ("forgotten", "archived"):
        return 0.0
    if weight.pinned:
        return 1.0
    elapsed = max(0, turn - weight.last_adopted_turn)
    decayed = max(weight.floor_weight, math.exp(-decay_lambda(weight.mention_count, base_lambda) * elapsed))
    return decayed if weight.forced_cap is None else min(decayed, weight.forced_cap)


def memory_weight_at(memory: object, turn: int, base_lambda: float = BASE_LAMBDA) -> float:
    """`memoryWeightAt` for an Event or Element (elements have no status, so they are never zeroed);
    `base_lambda` overrides the base decay rate for a what-if."""
    status = getattr(memory, "status", "active")
    return weight_at(memory.weight, status, turn, base_lambda)  # type: ignore[attr-defined]
