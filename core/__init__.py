"""StrataGate agent memory in pure Python (no Qt).

`stratagate.open(database, namespace)` and `stratagate.in_memory()` return a `StrataGate`, the memory facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stratagate.memory import StrataGate, in_memory, open

__version__ = "0.1.0"
__all__ = ["StrataGate", "in_memory", "open"]


def __getattr__(name: str) -> Any:
    # The facade is imported on first use, not with the package: `stratagate --version` and importing one
    # submodule (the CLI's, the tokenizer) should not pay for the engine, SQLAlchemy and numpy.
    if name in __all__:
        from stratagate import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'stratagate' has no attribute {name!r}")
