"""An eviction killed half-way loses nothing: the next process to take the store lock finishes it."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap

import pytest

from stratagate.strata import StrataStore, Tier, evict_journal, janitor
from stratagate.strata.cascade import read
from stratagate.strata.search import search


def test_eviction_killed_mid_batch_is_finished_by_the_next_lock_holder(store: StrataStore, write_file):
    texts = {f"notes/{number:02d}.md": f"note {number} about zebras\n" for number in range(10)}
    for path, text in texts.items():
        write_file(store.cooled_root, path, text)
    # The worker dies (os._exit, no cleanup) on the 5th rename: 4 files are blobs, 1 is rewritten in place
    # but not renamed, 5 are untouched; no shadow row is committed.
    worker = textwrap.dedent(
        f"""
        import os
        from stratagate.strata import StrataStore, StrataConfig, janitor
        real_rename, calls = os.rename, []
        def dying_rename(source, destination, **folders):
            calls.append(source)
            if len(calls) == 5:
                os._exit(9)
            real_rename(source, destination, **folders)
        os.rename = dying_rename
        config = StrataConfig(lru_decay_thresholds={{"*": 0}}, lru_min_access_count=0)
        store = StrataStore({str(store.base_dir)!r}, config)
        janitor.apply_evict(store, janitor.plan_evict(store))
        """
    )
    assert subprocess.run([sys.executable, "-c", worker], timeout=60).returncode == 9
    assert store.evict_journal_file.exists()
    assert store.counts()["archived"] == 0

    janitor.plan_evict(store)  # any lock holder recovers first

    assert not store.evict_journal_file.exists()
    assert store.list_files(Tier.COOLED) == []
    assert store.counts()["archived"] == 10
    blobs = [json.loads(path.read_text()) for path in store.archive_root.glob("*.json")]
    assert {blob["original_path"]: blob["content"] for blob in blobs} == texts
    assert len(search(store, "zebras", top_k=20)) == 10
    assert read(store, "notes/04.md").content == texts["notes/04.md"]


def test_journal_left_unfinished_before_any_file_moved_is_discarded(store: StrataStore, write_file):
    write_file(store.cooled_root, "a.md", "alpha")
    store.evict_journal_file.write_bytes(b'STRATA-EVICT-JOURNAL 1\n{"id": "x", "path": "a.md", "length": 9')
    janitor.plan_evict(store)
    assert not store.evict_journal_file.exists()
    assert (store.cooled_root / "a.md").read_text() == "alpha"
    assert list(store.archive_root.iterdir()) == []


def test_final_sync_failing_after_the_rows_committed_is_finished_by_the_next_lock_holder(
    store: StrataStore, write_file, monkeypatch
):
    # The rows are committed while the final `syncfs` runs: when that fails, the journal stays and the
    # next lock holder completes the run without adding a second row per file.
    texts = {f"notes/{number:02d}.md": f"note {number} about okapis\n" for number in range(6)}
    for path, text in texts.items():
        write_file(store.cooled_root, path, text)
    plan = janitor.plan_evict(store)

    def failing_sync(_path):
        raise OSError(errno.EIO, "simulated write-back error")

    with monkeypatch.context() as patched:
        patched.setattr(evict_journal, "sync_filesystem", failing_sync)
        with pytest.raises(OSError, match="simulated"):
            janitor.apply_evict(store, plan)
    assert store.evict_journal_file.exists()
    shadow = store.shadow()
    try:
        assert shadow.count() == 6  # committed while the final sync ran
    finally:
        shadow.close()
    assert store.evict_journal_file.exists()

    janitor.plan_evict(store)  # any lock holder recovers first

    assert not store.evict_journal_file.exists()
    assert store.list_files(Tier.COOLED) == []
    assert store.counts()["archived"] == 6
    shadow = store.shadow()
    try:
        assert sorted(entry.original_path for entry in shadow.all()) == sorted(texts)
    finally:
        shadow.close()
    assert len(search(store, "okapis", top_k=20)) == 6
