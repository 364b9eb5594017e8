"""numpy, imported when an array is first made: `from stratagate.arrays import np`.

The search index computes with numpy, but an empty or structured-order search, an open or an export never
makes an array, and importing numpy costs a one-shot process about 0.1 s of CPU. The engine's modules take
`np` from here instead of importing numpy themselves, so they can be imported freely; type checkers see
numpy itself.

The index never calls BLAS, but OpenBLAS starts a thread per core when numpy loads, and they spin for a while
(CPU time beyond wall time in a process's first searches). So when this import is the one that loads numpy
and the host has set no thread count, OpenBLAS gets one thread. A host that imports numpy first, or sets
`OPENBLAS_NUM_THREADS` (or `OMP_NUM_THREADS`), keeps its own setting; the environment is left as it was.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

THREAD_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""The variables OpenBLAS reads its thread count from when it loads."""


def import_numpy() -> ModuleType:
    """numpy, with OpenBLAS held to one thread if this import loads it and no thread count is set."""
    if "numpy" in sys.modules or any(name in os.environ for name in THREAD_SETTINGS):
        return importlib.import_module("numpy")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        return importlib.import_module("numpy")
    finally:  # read once, when the library loads: the host's environment (and its children's) is unchanged
        os.environ.pop("OPENBLAS_NUM_THREADS", None)


class _ImportedOnFirstUse:
    """Stands for numpy, imported at the first read of one of its attributes."""

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(import_numpy(), attribute)
        setattr(self, attribute, value)  # later reads of it cost what a module attribute costs
        return value


if TYPE_CHECKING:
    import numpy as np
else:
    np = _ImportedOnFirstUse()

__all__ = ["np"]
