"""The decay view's what-if event λ is the engine's own base-λ override (no stretched turn axis)."""

from __future__ import annotations

from pathlib import Path

from stratagate.memory import open as open_memory
from stratagate.weights import BASE_LAMBDA, memory_weight_at
from stratagate_gui.views.decay import load_curves
from tests.conftest import REFERENCE_NAMESPACE


def test_what_if_event_lambda_uses_the_engine_override(reference_db_copy: Path):
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE, read_only=True)
    event = memory.get_event("evt_51")
    for base in (BASE_LAMBDA, 0.4, 0.0):
        now, (curve,) = load_curves(memory, [("event", "evt_51")], 24, base, 0.3)
        turns, values = curve.projected
        assert turns[0] == now and len(turns) == 25
        assert values == [memory_weight_at(event, turn, base) for turn in turns]
    now, (engine_curve,) = load_curves(memory, [("event", "evt_51")], 24, BASE_LAMBDA, 0.3)
    assert engine_curve.projected[1][0] == memory.event_weight("evt_51")
    memory.close()
