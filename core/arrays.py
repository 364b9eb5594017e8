"""numpy, imported when an array is first made: `from stratagate.arrays import np`.

The search index computes with numpy, but an empty or structured-order search, an open or an export never
makes an array, and importing numpy costs a one-shot process about 0.1 s of CPU. The engine's modules take
`np` from here instead of importing numpy themselves, so they can be imported freely; type checkers see
numpy itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class _ImportedOnFirstUse:
    """Stands for a module that is imported at the first read of one of its attributes."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        value = getattr(module, attribute)
        setattr(self, attribute, value)  # later reads of it cost what a module attribute costs
        return value


if TYPE_CHECKING:
    import numpy as np
else:
    np = _ImportedOnFirstUse("numpy")

__all__ = ["np"]
