"""StrataGate agent memory in pure Python (no Qt).

`stratagate.open(database, namespace)` and `stratagate.in_memory()` return a `StrataGate`, the memory facade.
"""

from stratagate.memory import StrataGate, in_memory, open

__version__ = "0.1.0"
__all__ = ["StrataGate", "in_memory", "open"]
