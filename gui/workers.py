"""The database worker: every database call runs on one serialized thread, results return on the UI thread.

Like Anki's task manager: a single-thread executor keeps SQLite and PostgreSQL connections on one thread and
orders reads after writes; the UI thread never waits on a query. A task's callback runs on the UI thread
through a queued signal, so views may touch widgets in it.

Tasks run in the order asked, except background ones (live follow's census): those wait until every other
task has delivered and the UI has had `IDLE_MS` to paint and ask for more (a view asks for its first rows
when it paints them), so whole-namespace work never delays what the user is waiting to see.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QObject, QTimer, Signal

T = TypeVar("T")
IDLE_MS = 200
"""How long the foreground must stay idle before background tasks start."""

_garbage_collector: GarbageCollector | None = None


def collect_garbage_on_the_ui_thread() -> None:
    """Python's cyclic garbage collector runs in whichever thread happens to allocate. On the database thread
    it may destroy the Qt widgets of a closed window while the UI thread destroys others: each thread then
    holds what the other waits for (a Qt mutex, the GIL) and the app hangs. So once a database thread exists,
    automatic collection is off and pyqtgraph's timer collects on the UI thread instead."""
    global _garbage_collector
    if _garbage_collector is None:
        _garbage_collector = GarbageCollector()


class DatabaseWorker(QObject):
    """Runs `task()` callables one at a time on a background thread."""

    failed = Signal(str, object)
    """A task without its own error handler raised: (what was being done, the exception)."""
    busy_changed = Signal(bool)
    """True when the first task is queued, False when the queue drains."""

    _deliver = Signal()
    """One finished task's callback is waiting in `_outcomes`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        collect_garbage_on_the_ui_thread()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stratagate-db")
        self._pending = 0
        self._shut_down = False
        self._queued: set[Future] = set()
        self._lanes: tuple[deque, deque] = (deque(), deque())
        """(foreground, background) tasks handed to the thread but not started, as (future, job)."""
        self._lanes_lock = threading.Lock()
        self._foreground = 0
        """Foreground tasks queued or running whose callbacks have not run yet."""
        self._parked: deque = deque()
        """Background tasks waiting for the foreground to be idle."""
        self._jobs: dict[Future, Callable[[], Callable[[], Any]]] = {}
        """Every queued job (with the task and callbacks it holds) until its callback has run on the UI thread.
        The database thread must never drop the last reference to them: a Qt object that goes with them (a
        progress dialog, a view) would be deleted on that thread, leaving its timers registered on the UI
        thread, which then crashes when they fire."""
        self._outcomes: deque[tuple[Future, Callable[[], Any], bool]] = deque()
        """Finished tasks' callbacks, in order, for the UI thread to run and release."""
        self._idle = QTimer(self)
        self._idle.setSingleShot(True)
        self._idle.setInterval(IDLE_MS)
        self._idle.timeout.connect(self._release_background)
        # Emitted from the worker thread, received on the thread owning this object: a queued connection.
        self._deliver.connect(self._run_on_ui_thread)

    @property
    def pending(self) -> int:
        """Tasks queued or running whose callbacks have not run yet."""
        return self._pending

    def run(
        self,
        task: Callable[[], T],
        on_done: Callable[[T], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        description: str = "database task",
        background: bool = False,
    ) -> Future:
        """Queue `task`; `on_done(result)` or `on_error(exception)` later runs on the UI thread. A `background`
        task runs once no other task is waiting (the ones queued after it included)."""
        if self._shut_down:
            # The window closed: a callback still in the event queue may ask for more; nothing runs any more.
            cancelled: Future = Future()
            cancelled.cancel()
            return cancelled
        self._pending += 1
        if self._pending == 1:
            self.busy_changed.emit(True)

        def job() -> Callable[[], Any]:
            """Runs the task on the database thread; returns what the UI thread then runs."""
            try:
                result = task()
            except Exception as error:  # reported on the UI thread, never swallowed
                return lambda failure=error: self._report(failure, on_error, description)
            return lambda: on_done(result) if on_done else None

        future: Future = Future()
        self._jobs[future] = job
        self._queued.add(future)
        future.add_done_callback(self._queued.discard)
        if background:
            self._parked.append((future, job))
            self._release_when_idle()
        else:
            self._foreground += 1
            self._hand_over(future, job, background=False)
        return future

    def _hand_over(self, future: Future, job: Callable[[], None], background: bool) -> None:
        with self._lanes_lock:
            self._lanes[background].append((future, job))
        self._executor.submit(self._run_next)

    def _release_when_idle(self) -> None:
        if self._parked and not self._foreground and not self._shut_down:
            self._idle.start()

    def _release_background(self) -> None:
        if self._foreground or self._shut_down:
            return  # the foreground's last callback starts the timer again
        while self._parked:
            self._hand_over(*self._parked.popleft(), background=True)

    def _run_next(self) -> None:
        """One executor slot: the oldest foreground task, else the oldest background one."""
        with self._lanes_lock:
            foreground, background = self._lanes
            lane = foreground or background
            future, job = lane.popleft()
        if not future.set_running_or_notify_cancel():
            return
        outcome = job()
        # Drop this thread's references before the UI thread can run the outcome: `_jobs` and `_outcomes`
        # hold them until then, so the last reference always goes on the UI thread.
        del job
        self._outcomes.append((future, outcome, lane is background))
        del outcome
        future.set_result(None)
        self._deliver.emit()

    def call(self, task: Callable[[], T]) -> T:
        """Run `task` on the worker thread and wait for it: for scripts and tests, never from the app."""
        return self._executor.submit(task).result()

    def shutdown(self, last: Callable[[], object] | None = None) -> None:
        """Drop the tasks still queued, let the running one finish, run `last` (closing the memory), and end
        the thread. Waits for those two only: the window closes without reading what nobody will see."""
        self._shut_down = True
        self._idle.stop()
        for future in list(self._queued):
            future.cancel()
        if last is not None:
            self._executor.submit(last)
        self._executor.shutdown(wait=True, cancel_futures=False)
        self._jobs.clear()

    def _report(self, error: BaseException, on_error: Callable[[BaseException], Any] | None, what: str) -> None:
        if on_error is not None:
            on_error(error)
        else:
            self.failed.emit(what, error)

    def _run_on_ui_thread(self) -> None:
        future, callback, background = self._outcomes.popleft()
        try:
            callback()
        finally:
            del callback
            self._jobs.pop(future, None)
            self._pending -= 1
            if not background:
                self._foreground -= 1
                self._release_when_idle()
            if self._pending == 0:
                self.busy_changed.emit(False)
