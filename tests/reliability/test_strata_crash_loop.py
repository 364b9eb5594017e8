"""SIGKILL the Strata janitor at random moments; after each kill no file is lost and none is damaged.

A forked child cycles a fixed set of markdown files through the tiers (rehydrate archive -> active, migrate
active -> cooled, evict cooled -> archive) until killed; every other child rewrites in eviction's worker
process, and in some of those the worker is killed instead (its janitor must then stop with an error, or be
killed too if the worker had already finished). The parent then takes the store lock (which
finishes an interrupted eviction batch) and requires every file, with its exact bytes, in exactly one tier:
as a file of active/ or cooled/, or as an archive blob listed in the shadow index. (A rehydration killed
between restoring a file and dropping its shadow row is finished by that next lock holder.)
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from multiprocessing.synchronize import Event as EventFlag
from pathlib import Path

import pytest

from stratagate.strata import StrataStore, Tier, janitor, rewrite_worker
from stratagate.strata.archive import read_blob
from stratagate.strata.store import walk_files
from tests.strata.conftest import immediate_config

KILLS = 200
MAX_DELAY = 0.15
FILES = {
    f"notes/{number:02d}.md": f"# Note {number}\n\nZebra fact {number}: stripes é中文.\n"
    for number in range(12)
}


def _cycle_tiers(base_dir: Path, ready: EventFlag, in_worker: bool) -> None:
    """Move every file around the three tiers forever (runs in a forked child)."""
    if in_worker:  # this forked child has one thread: its evictions fork the worker
        rewrite_worker.MIN_FILES = 0
    store = StrataStore(base_dir, immediate_config())
    ready.set()
    while True:
        janitor.apply_rehydrate(store, janitor.plan_rehydrate(store, sorted(FILES)))
        janitor.apply_migrate(store, janitor.plan_migrate(store))
        janitor.apply_evict(store, janitor.plan_evict(store))


def _kill_the_rewrite_worker(janitor_pid: int) -> bool:
    """SIGKILL the janitor's rewrite worker, waiting up to a second for one; whether one was killed."""
    children = Path(f"/proc/{janitor_pid}/task/{janitor_pid}/children")
    for _ in range(100):
        pids = children.read_text().split()
        if pids:
            os.kill(int(pids[0]), signal.SIGKILL)
            return True
        time.sleep(0.01)
    return False


def _stored_copies(store: StrataStore) -> dict[str, list[str]]:
    """Every copy of every file the store holds, by original path."""
    copies: dict[str, list[str]] = {}
    for tier in (Tier.ACTIVE, Tier.COOLED):
        for relative, _entry in walk_files(store.tier_root(tier)):
            if not store.is_generated(tier, relative):
                copies.setdefault(relative, []).append(
                    store.file_path(tier, relative).read_text(encoding="utf-8")
                )
    shadow = store.shadow(create=False)
    try:
        for entry in shadow.all():
            blob = read_blob(janitor.blob_file(store, entry))
            copies.setdefault(blob.original_path, []).append(blob.content)
    finally:
        shadow.close()
    return copies


@pytest.mark.slow
def test_killing_the_janitor_never_loses_a_file(tmp_path: Path) -> None:
    store = StrataStore(tmp_path / "strata_data", immediate_config())
    store.init()
    for relative, text in FILES.items():
        (store.active_root / relative).parent.mkdir(parents=True, exist_ok=True)
        (store.active_root / relative).write_text(text, encoding="utf-8")
    context = multiprocessing.get_context("fork")
    rng = random.Random(1201)
    workers_killed = 0
    for kill in range(KILLS):
        ready = context.Event()
        in_worker = kill % 2 == 1
        child = context.Process(target=_cycle_tiers, args=(store.base_dir, ready, in_worker), daemon=True)
        child.start()
        assert ready.wait(timeout=60)
        child.join(timeout=rng.uniform(0, MAX_DELAY))
        assert child.is_alive(), f"janitor {kill} stopped by itself with exit code {child.exitcode}"
        if in_worker and kill % 4 == 3 and _kill_the_rewrite_worker(child.pid):
            workers_killed += 1
            child.join(timeout=5)  # the janitor notices and stops with an error
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)

        with store.lock():  # the next lock holder finishes an interrupted eviction
            pass
        copies = _stored_copies(store)
        assert set(copies) == set(FILES), f"after kill {kill}: lost {set(FILES) - set(copies)}"
        for relative, texts in copies.items():
            assert texts == [FILES[relative]], f"after kill {kill}: {relative} damaged or duplicated: {texts}"
    assert workers_killed > KILLS // 8, f"only {workers_killed} rewrite workers were found and killed"
