"""SIGKILL a writer at 200 random moments; after each kill the SQLite file opens whole and consistent.

One forked child writes until killed (a random delay after it opened the database, so kills land in
appends, seals, extractions, projections, card additions and journaled curations alike); the parent then
checks the file (tests/reliability/engine_workload.py) and starts the next child on the same file.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.reliability.engine_workload import check_database, last_logged, run_workload

KILLS = 200
MAX_DELAY = 0.12  # seconds of writing before the kill; the file keeps growing across kills


@pytest.mark.slow
def test_two_hundred_kills_leave_the_database_whole(tmp_path: Path) -> None:
    database, log_path = tmp_path / "crash.sqlite", tmp_path / "writer.log"
    context = multiprocessing.get_context("fork")
    rng = random.Random(20261201)
    killed_in: Counter[str | None] = Counter()
    last: dict = {}
    for kill in range(KILLS):
        ready = context.Event()
        child = context.Process(target=run_workload, args=(str(database), log_path, ready, kill), daemon=True)
        child.start()
        assert ready.wait(timeout=60), f"writer {kill} never opened the database (exit {child.exitcode})"
        ready.clear()
        child.join(timeout=rng.uniform(0, MAX_DELAY))
        assert child.is_alive(), f"writer {kill} stopped by itself with exit code {child.exitcode}"
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
        assert child.exitcode == -signal.SIGKILL

        logged_revision, in_flight = last_logged(log_path)
        killed_in[in_flight] += 1
        last = check_database(database, logged_revision, in_flight is not None)

    print(f"engine crash loop: {KILLS} kills, killed inside {dict(killed_in)}, final state {last}")
    assert sum(count for operation, count in killed_in.items() if operation) > KILLS // 2  # kills hit writes
    assert last["turns"] > 50 and last["events"] > 20 and last["journal"] > 20
