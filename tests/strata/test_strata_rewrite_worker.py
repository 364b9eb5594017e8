"""Eviction's rewrite in a worker process: same outcome as the rewrite thread, and a worker that dies fails
the run cleanly, leaving the journal to the next lock holder, with nothing lost."""

from __future__ import annotations

import errno
import json
import os
import signal
import threading

import pytest

from stratagate.strata import StrataStore, Tier, janitor, rewrite_worker
from stratagate.strata import evict_journal as evict_journal_module
from stratagate.strata.cascade import read
from stratagate.strata.errors import RewriteWorkerDied
from stratagate.strata.evict_journal import append_batch

TEXTS = {f"notes/{number:02d}.md": f"# Note {number}\n\nabout zebras é {number}\n" for number in range(10)}


@pytest.fixture
def cooled_notes(store: StrataStore, write_file) -> StrataStore:
    for path, text in TEXTS.items():
        write_file(store.cooled_root, path, text)
    return store


def _fork_for_every_run(monkeypatch) -> None:
    """Every eviction forks the worker, also when pytest has other threads (a GUI test's Qt threads, idle
    meanwhile); `test_the_worker_is_forked_only_by_a_process_with_one_thread` checks the real condition."""
    monkeypatch.setattr(rewrite_worker, "MIN_FILES", 0)
    monkeypatch.setattr(rewrite_worker, "_may_fork", lambda: True)


def _outcome(store: StrataStore, results) -> dict:
    """Everything an eviction leaves behind, with the random ids taken out."""
    shadow = store.shadow(create=False)
    try:
        rows = [(entry.original_path, entry.keywords, entry.summary_preview) for entry in shadow.all()]
    finally:
        shadow.close()
    blobs = sorted(path.read_bytes() for path in store.archive_root.glob("*.json"))
    shown = [
        (
            result.path,
            result.status,
            result.detail.replace(str(store.base_dir), "<store>"),
            result.age_days,
            result.access_count,
            result.target,
        )
        for result in results
    ]
    cooled = {
        file.path: (store.cooled_root / file.path).read_bytes() for file in store.list_files(Tier.COOLED)
    }
    return {
        "results": shown,
        "rows": rows,
        "blobs": blobs,
        "cooled": cooled,
        "sidecar": store.sidecar_file.read_bytes(),
    }


def _evict_with_edit_and_hard_link(store: StrataStore, monkeypatch) -> dict:
    os.link(store.cooled_root / "notes/03.md", store.base_dir / "elsewhere.md")  # not rewritten in place
    edited = store.cooled_root / "notes/05.md"

    def journal_then_edit(journal, batch) -> None:
        append_batch(journal, batch)
        with open(edited, "a", encoding="utf-8") as handle:
            handle.write("edited while evicting\n")

    monkeypatch.setattr(evict_journal_module, "append_batch", journal_then_edit)
    monkeypatch.setattr(janitor, "utc_now_iso", lambda: "2026-12-02T00:00:00+00:00")
    return _outcome(store, janitor.apply_evict(store, janitor.plan_evict(store)))


def _counting_fork(forks: list[int]):
    real_fork = os.fork

    def fork() -> int:
        forks.append(1)
        return real_fork()

    return fork


def test_the_worker_leaves_exactly_what_the_rewrite_thread_leaves(
    tmp_path, write_file, immediate, monkeypatch
):
    outcomes = []
    for name in ("thread", "worker"):
        store = StrataStore(tmp_path / name, immediate())
        store.init()
        for path, text in TEXTS.items():
            write_file(store.cooled_root, path, text)
        (store.sidecar_file).write_text("{}\n")
        if name == "worker":
            _fork_for_every_run(monkeypatch)
        else:
            monkeypatch.setattr(rewrite_worker, "MIN_FILES", 10**9)
        forks: list[int] = []
        monkeypatch.setattr(os, "fork", _counting_fork(forks))
        outcomes.append(_evict_with_edit_and_hard_link(store, monkeypatch))
        monkeypatch.undo()
        assert len(forks) == (name == "worker")
    assert outcomes[0] == outcomes[1]
    statuses = {path: status for path, status, *_ in outcomes[1]["results"]}
    assert statuses["notes/05.md"] == "skipped" and statuses["notes/03.md"] == "evicted"
    assert outcomes[1]["cooled"] == {
        "notes/05.md": TEXTS["notes/05.md"].encode() + b"edited while evicting\n"
    }


def _dying_rename(monkeypatch, on_call: int, die) -> None:
    """`os.rename` as the worker will bind it: its `on_call`-th call kills the worker (`die`)."""
    real_rename, calls = os.rename, []

    def rename(source, destination, **folders):
        calls.append(source)
        if len(calls) == on_call:
            die()
        real_rename(source, destination, **folders)

    monkeypatch.setattr(os, "rename", rename)


@pytest.mark.parametrize(
    ("die", "told"),
    [
        (lambda: os._exit(9), "exited with code 9"),
        (lambda: os.kill(os.getpid(), signal.SIGKILL), "was killed by signal 9"),
    ],
)
def test_a_worker_dying_mid_batch_fails_the_run_and_the_next_lock_holder_finishes_it(
    cooled_notes: StrataStore, monkeypatch, die, told
):
    store = cooled_notes
    _fork_for_every_run(monkeypatch)
    _dying_rename(monkeypatch, 5, die)  # 4 files are blobs, 6 untouched

    with pytest.raises(RewriteWorkerDied, match=told):
        janitor.apply_evict(store, janitor.plan_evict(store))
    monkeypatch.undo()

    assert store.evict_journal_file.exists()
    assert store.counts()["archived"] == 0  # no row committed
    janitor.plan_evict(store)  # any lock holder recovers first
    assert not store.evict_journal_file.exists()
    assert store.list_files(Tier.COOLED) == []
    assert store.counts()["archived"] == 10
    blobs = [json.loads(path.read_text()) for path in store.archive_root.glob("*.json")]
    assert {blob["original_path"]: blob["content"] for blob in blobs} == TEXTS
    assert read(store, "notes/04.md").content == TEXTS["notes/04.md"]


def test_an_error_in_the_worker_is_raised_as_the_rewrite_thread_raises_it(
    cooled_notes: StrataStore, monkeypatch
):
    store = cooled_notes
    _fork_for_every_run(monkeypatch)

    def refuse():
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), "03.md", None, "x.json")

    _dying_rename(monkeypatch, 4, refuse)
    with pytest.raises(OSError, match="Read-only file system: '03.md' -> 'x.json'") as raised:
        janitor.apply_evict(store, janitor.plan_evict(store))
    monkeypatch.undo()
    assert raised.value.errno == errno.EROFS
    janitor.plan_evict(store)
    assert store.counts()["archived"] + len(store.list_files(Tier.COOLED)) == 10


def test_batches_queued_behind_a_failed_one_are_finished_by_the_next_lock_holder(
    cooled_notes: StrataStore, monkeypatch
):
    """The worker takes batches queued ahead: after an error in the first, the next ones may still be moved,
    and the next lock holder finishes them from their durable journal sections."""
    store = cooled_notes
    _fork_for_every_run(monkeypatch)
    monkeypatch.setattr(janitor, "EVICT_EDGE_BATCH_FILES", 2)
    monkeypatch.setattr(janitor, "_evict_batch_files", lambda: 3)  # batches of 2, 3, 2, 2, 1 files

    def refuse():
        raise OSError(errno.EIO, os.strerror(errno.EIO), "01.md", None, "x.json")

    _dying_rename(monkeypatch, 2, refuse)
    with pytest.raises(OSError, match="Input/output error"):
        janitor.apply_evict(store, janitor.plan_evict(store))
    monkeypatch.undo()

    assert store.evict_journal_file.exists()
    janitor.plan_evict(store)  # any lock holder recovers first
    assert not store.evict_journal_file.exists()
    # the two journalled batches are archived (the failed one too), the three never read are still cooled
    assert store.counts()["archived"] == 5
    assert [file.path for file in store.list_files(Tier.COOLED)] == [
        f"notes/{n:02d}.md" for n in range(5, 10)
    ]
    for path, text in TEXTS.items():
        assert read(store, path).content == text


def test_small_runs_and_failed_forks_rewrite_in_a_thread(cooled_notes: StrataStore, monkeypatch):
    store = cooled_notes

    def no_fork():
        raise OSError(errno.EAGAIN, "no more processes")

    monkeypatch.setattr(os, "fork", no_fork)
    _fork_for_every_run(monkeypatch)  # a fork is tried, fails: the thread rewrites
    results = janitor.apply_evict(store, janitor.plan_evict(store, ["notes/00.md", "notes/01.md"]))
    assert [result.status for result in results] == ["evicted", "evicted"]
    monkeypatch.setattr(rewrite_worker, "MIN_FILES", 1000)  # too few files to fork at all
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked for a small run"))
    results = janitor.apply_evict(store, janitor.plan_evict(store))
    assert [result.status for result in results] == ["evicted"] * 8
    assert store.counts()["archived"] == 10


def test_the_worker_is_forked_only_by_a_process_with_one_thread(cooled_notes: StrataStore, monkeypatch):
    pid = os.fork()
    if pid == 0:  # a forked child has one thread, whatever its parent had
        os._exit(0 if rewrite_worker._may_fork() else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0

    monkeypatch.setattr(rewrite_worker, "MIN_FILES", 0)
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked beside another thread"))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not rewrite_worker._may_fork()
        results = janitor.apply_evict(cooled_notes, janitor.plan_evict(cooled_notes))
    finally:
        stop.set()
        other.join()
    assert [result.status for result in results] == ["evicted"] * 10
