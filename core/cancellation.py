"""Cooperative cancellation of long reads (an app's "Cancel" button): the caller runs the work inside
`cancellable(event)` on its thread; the engine's long loops call `checkpoint()`, which raises
`OperationCancelled` once the event is set. Outside such a scope a checkpoint costs one context-variable read.

What a cancelled read was building (a search index, a loaded section) is dropped before it is kept, so the
memory stays as it was and the next read starts the work again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from stratagate.errors import StrataGateError

_cancelled: ContextVar[threading.Event | None] = ContextVar("stratagate_cancelled", default=None)


class OperationCancelled(StrataGateError):
    """The caller cancelled the read; nothing it was building was kept."""


@contextmanager
def cancellable(cancelled: threading.Event) -> Iterator[None]:
    """Checkpoints reached inside this block (on this thread) stop the work once `cancelled` is set."""
    token = _cancelled.set(cancelled)
    try:
        yield
    finally:
        _cancelled.reset(token)


def checkpoint() -> None:
    """Raise `OperationCancelled` if the read running on this thread was cancelled."""
    cancelled = _cancelled.get()
    if cancelled is not None and cancelled.is_set():
        raise OperationCancelled("cancelled")
