"""StrataGate agent memory in pure Python (no Qt).

`stratagate.open(database, namespace)` and `stratagate.in_memory()` return a `StrataGate`, the memory facade.
"""

__version__ = "0.1.0"
