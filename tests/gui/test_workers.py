"""The database worker runs tasks one at a time off the UI thread and delivers results on the UI thread."""

from __future__ import annotations

import gc
import threading

from stratagate_gui.workers import DatabaseWorker


def test_tasks_run_in_order_on_one_background_thread(qtbot):
    worker = DatabaseWorker()
    task_threads: list[int] = []
    results: list[int] = []
    callback_threads: list[int] = []

    def task(number: int) -> int:
        task_threads.append(threading.get_ident())
        return number

    def done(number: int) -> None:
        results.append(number)
        callback_threads.append(threading.get_ident())

    for number in range(5):
        worker.run(lambda n=number: task(n), on_done=done)
    qtbot.waitUntil(lambda: len(results) == 5)
    assert results == [0, 1, 2, 3, 4]
    assert len(set(task_threads)) == 1 and task_threads[0] != threading.get_ident()
    assert set(callback_threads) == {threading.get_ident()}
    assert worker.pending == 0
    worker.shutdown()


def test_errors_reach_the_handler_or_the_failed_signal(qtbot):
    worker = DatabaseWorker()
    handled: list[str] = []

    def boom() -> None:
        raise ValueError("bad row")

    worker.run(boom, on_error=lambda error: handled.append(str(error)))
    qtbot.waitUntil(lambda: handled == ["bad row"])
    with qtbot.waitSignal(worker.failed) as blocker:
        worker.run(boom, description="read events")
    assert blocker.args[0] == "read events" and str(blocker.args[1]) == "bad row"
    worker.shutdown()


def test_a_task_asked_for_after_shutdown_is_dropped(qtbot):
    """A callback still queued when the window closed may ask for more work: nothing runs, nothing raises."""
    worker = DatabaseWorker()
    worker.shutdown()
    ran: list[int] = []
    future = worker.run(lambda: ran.append(1), on_done=ran.append)
    assert future.cancelled() and worker.pending == 0
    qtbot.wait(20)
    assert ran == []


def test_garbage_cycles_are_collected_on_the_ui_thread_only(qtbot):
    # A cycle collected on the database thread could destroy Qt widgets there and deadlock the app.
    worker = DatabaseWorker()
    assert not gc.isenabled()
    collected_on: list[str] = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            collected_on.append(threading.current_thread().name)

    Cycle()
    # Containers kept alive from the database thread would trigger automatic collection there, were it on.
    kept: list[list[list[int]]] = []
    worker.run(lambda: [[index] for index in range(20_000)], on_done=kept.append)
    qtbot.waitUntil(lambda: worker.pending == 0)
    qtbot.waitUntil(lambda: bool(collected_on), timeout=5_000)
    assert collected_on == [threading.main_thread().name]
    worker.shutdown()


def test_a_background_task_waits_for_every_other_queued_task(qtbot):
    """Live follow's census runs in the background lane: the views' reads queued after it still go first."""
    worker = DatabaseWorker()
    gate = threading.Event()
    order: list[str] = []
    worker.run(gate.wait)  # holds the thread while the others queue
    worker.run(lambda: order.append("census"), background=True)
    worker.run(lambda: order.append("first rows"))
    worker.run(lambda: order.append("list ids"))
    gate.set()
    qtbot.waitUntil(lambda: worker.pending == 0)
    assert order == ["first rows", "list ids", "census"]
    worker.shutdown()


def test_what_tasks_and_callbacks_hold_is_released_on_the_ui_thread(qtbot):
    """A Qt object deleted on the database thread leaves its timers registered on the UI thread, which then
    crashes when they fire: the worker lets go of a task and its callbacks only on the UI thread."""
    worker = DatabaseWorker()
    released: list[int] = []
    called: list[int] = []

    class Held:
        def __del__(self) -> None:
            released.append(threading.get_ident())

    for number in range(20):
        by_task, by_callback = Held(), Held()
        worker.run(lambda held=by_task: None, on_done=lambda _none, n=number, held=by_callback: called.append(n))
        del by_task, by_callback
    qtbot.waitUntil(lambda: len(called) == 20 and len(released) == 40)
    assert set(released) == {threading.get_ident()}
    worker.shutdown()
