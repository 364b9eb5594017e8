"""How hard the property tests search.

CI keeps each property's own budget. Before a stop, run them with many more examples:

    STRATAGATE_PROPERTIES=long .venv/bin/python -m pytest tests -k "propert or cache or index or snapshot"

A failure found that way is a bug, fixed and pinned with `@example`, never a flake.
"""

from __future__ import annotations

import os

LONG_RUN_FACTOR = 30
_FACTOR = LONG_RUN_FACTOR if os.environ.get("STRATAGATE_PROPERTIES") == "long" else 1


def examples(ci_budget: int) -> int:
    """The number of examples a property tries: its CI budget, or many times that in the long run."""
    return ci_budget * _FACTOR
