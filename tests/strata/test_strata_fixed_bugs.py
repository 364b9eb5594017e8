"""One test per reference bug this implementation fixes (ids from the spec's §15)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stratagate.strata import StrataStore, Tier, janitor, load_config
from stratagate.strata.cascade import read
from stratagate.strata.errors import (
    CorruptShadowIndexError,
    CorruptSidecarError,
    StoreNotFoundError,
    StrataConfigError,
    UnsafePathError,
)
from stratagate.strata.repair import rebuild_shadow_index, repair_sidecar
from stratagate.strata.search import search
from stratagate.strata.sidecar import AccessRecord


def evict_all(store: StrataStore):
    return janitor.apply_evict(store, janitor.plan_evict(store))


def test_b3_archive_blob_is_named_after_its_shadow_row_and_never_overwritten(store: StrataStore, write_file):
    write_file(store.cooled_root, "notes/a.md", "first version")
    [first] = evict_all(store)
    write_file(store.cooled_root, "notes/a.md", "second version")
    [second] = evict_all(store)
    assert first.shadow_id != second.shadow_id
    blobs = {path.stem: json.loads(path.read_text())["content"] for path in store.archive_root.iterdir()}
    assert blobs == {first.shadow_id: "first version", second.shadow_id: "second version"}


def test_b4_read_restores_the_newest_archive_and_rehydrate_leaves_no_orphan_blob(
    store: StrataStore, write_file
):
    write_file(store.cooled_root, "notes/a.md", "old")
    evict_all(store)
    write_file(store.cooled_root, "notes/a.md", "new")
    evict_all(store)
    assert read(store, "notes/a.md").content == "new"
    assert [json.loads(path.read_text())["content"] for path in store.archive_root.iterdir()] == ["old"]
    assert store.counts()["archived"] == 1


def test_b7_index_md_is_never_migrated_or_returned_by_search(store: StrataStore):
    store.write("projects/roadmap.md", "# Roadmap\nquarterly roadmap\n")
    assert [result.path for result in janitor.plan_migrate(store)] == ["projects/roadmap.md"]
    assert [hit.path for hit in search(store, "roadmap")] == ["projects/roadmap.md"]
    with pytest.raises(UnsafePathError, match="index.md"):
        store.write("index.md", "clobbered")


def test_b8_promote_never_overwrites_a_newer_active_file(store: StrataStore, write_file):
    write_file(store.cooled_root, "plan.md", "stale cooled copy")
    write_file(store.active_root, "plan.md", "newer active file")
    plan = janitor.plan_promote(store, ["plan.md"])
    assert [result.status for result in plan] == ["conflict"]
    janitor.apply_promote(store, plan)
    assert (store.active_root / "plan.md").read_text() == "newer active file"
    assert (store.cooled_root / "plan.md").read_text() == "stale cooled copy"


def test_b8_rehydrate_never_overwrites_an_existing_file(store: StrataStore, write_file):
    write_file(store.cooled_root, "plan.md", "archived text")
    evict_all(store)
    write_file(store.active_root, "plan.md", "current text")
    results = janitor.apply_rehydrate(store, janitor.plan_rehydrate(store, ["plan.md"]))
    assert [result.status for result in results] == ["conflict"]
    assert (store.active_root / "plan.md").read_text() == "current text"
    assert store.counts()["archived"] == 1 and len(list(store.archive_root.iterdir())) == 1


def test_b8_migrate_never_overwrites_a_cooled_file(store: StrataStore, write_file):
    write_file(store.active_root, "plan.md", "active text")
    write_file(store.cooled_root, "plan.md", "cooled text")
    results = janitor.apply_migrate(store, janitor.plan_migrate(store))
    assert [result.status for result in results] == ["conflict"]
    assert (store.active_root / "plan.md").read_text() == "active text"
    assert (store.cooled_root / "plan.md").read_text() == "cooled text"


def test_b9_sibling_folder_with_the_tier_name_as_prefix_is_not_inside(store: StrataStore):
    (store.base_dir / "active_evil").mkdir()
    (store.base_dir / "active_evil/x.md").write_text("secret")
    for attempt in ("../active_evil/x.md", "/etc/passwd", "a/../../active_evil/x.md"):
        with pytest.raises(UnsafePathError):
            read(store, attempt)
        with pytest.raises(UnsafePathError):
            store.write(attempt, "x")


def test_b9_symlink_out_of_the_tree_is_refused_and_never_moved(store: StrataStore, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (store.active_root / "link").symlink_to(outside, target_is_directory=True)
    (store.active_root / "file-link.md").symlink_to(outside / "secret.md")
    with pytest.raises(UnsafePathError, match="symlink"):
        read(store, "link/secret.md")
    with pytest.raises(UnsafePathError, match="symlink"):
        store.write("link/new.md", "x")
    plan = janitor.plan_migrate(store)
    assert [(result.path, result.status) for result in plan] == [("file-link.md", "skipped")]
    janitor.apply_migrate(store, plan)
    assert (outside / "secret.md").read_text() == "secret"
    assert (store.active_root / "file-link.md").is_symlink()


def test_b9_file_swapped_for_a_symlink_after_the_plan_is_neither_read_nor_written(
    store: StrataStore, write_file, tmp_path: Path
):
    outside = write_file(tmp_path, "outside.md", "keep me")
    write_file(store.cooled_root, "a.md", "archived")
    plan = janitor.plan_evict(store)
    (store.cooled_root / "a.md").unlink()
    (store.cooled_root / "a.md").symlink_to(outside)
    [result] = janitor.apply_evict(store, plan)
    assert result.status == "error"
    assert outside.read_text() == "keep me"
    assert (store.cooled_root / "a.md").is_symlink() and store.counts()["archived"] == 0


def test_b9_forget_and_rehydrate_cannot_reach_outside_the_store(
    store: StrataStore, write_file, tmp_path: Path
):
    write_file(tmp_path, "outside.md", "keep me")
    with pytest.raises(UnsafePathError):
        janitor.plan_evict(store, ["../../outside.md"])
    # A tampered blob pointing outside restores nothing and deletes nothing.
    write_file(store.cooled_root, "a.md", "archived")
    [evicted] = evict_all(store)
    blob_path = store.archive_root / f"{evicted.shadow_id}.json"
    blob = json.loads(blob_path.read_text())
    blob["original_path"] = "../../outside.md"
    blob_path.write_text(json.dumps(blob))
    [result] = janitor.plan_rehydrate(store, [evicted.shadow_id])
    assert result.status == "error" and "'..' would leave the tier" in result.detail
    assert (tmp_path / "outside.md").read_text() == "keep me"
    assert blob_path.exists()


def test_b10_concurrent_writers_lose_no_access_and_never_corrupt_the_sidecar(store: StrataStore, write_file):
    write_file(store.cooled_root, "shared.md", "shared")
    store.config.promotion_threshold = 10_000
    from stratagate.strata import save_config

    save_config(store.base_dir, store.config)
    worker = textwrap.dedent(
        f"""
        from stratagate.strata import StrataStore
        from stratagate.strata.cascade import read
        store = StrataStore({str(store.base_dir)!r})
        for _ in range(40):
            read(store, "shared.md")
        """
    )
    processes = [subprocess.Popen([sys.executable, "-c", worker], stderr=subprocess.PIPE) for _ in range(4)]
    errors = [process.communicate()[1].decode() for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0, 0], errors
    assert json.loads(store.sidecar_file.read_text())["shared.md"]["access_count"] == 160


def test_b10_corrupt_sidecar_is_reported_by_name_and_repair_keeps_a_backup(store: StrataStore, write_file):
    write_file(store.cooled_root, "a.md", "a")
    write_file(store.cooled_root, "b.md", "b")
    damaged = '{"a.md": {"access_count": 2, "last_accessed": 1.0}, "b.md": {"access_co'
    store.sidecar_file.write_text(damaged)
    with pytest.raises(CorruptSidecarError, match="stratum_2_access.json"):
        janitor.plan_evict(store)
    with pytest.raises(CorruptSidecarError):
        read(store, "a.md")
    assert sorted(path.name for path in store.cooled_root.iterdir()) == ["a.md", "b.md"]
    report = repair_sidecar(store)
    assert report.backup.read_text() == damaged
    # The complete entry survives the truncation; the cut one is gone.
    assert store.sidecar().records == {"a.md": AccessRecord(2, 1.0)}
    valid_but_orphaned = {
        "a.md": {"access_count": 2, "last_accessed": 1.0},
        "gone.md": {"access_count": 1, "last_accessed": 1.0},
    }
    store.sidecar_file.write_text(json.dumps(valid_but_orphaned))
    report = repair_sidecar(store)
    assert (report.kept, report.dropped) == (1, ["gone.md"])


def test_b11_non_canonical_paths_share_one_sidecar_entry(store: StrataStore, write_file):
    write_file(store.cooled_root, "p/a.md", "a")
    store.config.promotion_threshold = 100
    for spelling in ("p/a.md", "./p/a.md", "p//a.md", "p\\a.md"):
        read(store, spelling)
    assert list(json.loads(store.sidecar_file.read_text())) == ["p/a.md"]
    assert store.sidecar().get("p/a.md").access_count == 4


def test_b12_forget_drops_the_sidecar_entry(store: StrataStore, write_file):
    write_file(store.active_root, "a.md", "a")
    janitor.apply_migrate(store, janitor.plan_migrate(store))
    janitor.apply_evict(store, janitor.plan_evict(store, ["a.md"]))
    assert json.loads(store.sidecar_file.read_text()) == {}


def test_b17_fts_operators_and_punctuation_are_searched_as_words(store: StrataStore, write_file):
    write_file(
        store.cooled_root, "gtd/stripe.md", "stripe-payments for e-commerce; c++ NOT rust; a/b foo:bar"
    )
    evict_all(store)
    for query in ("e-commerce", "stripe-payments", "c++", "a/b", "foo:bar", "NOT rust", "rust NOT"):
        assert [hit.tier for hit in search(store, query)] == [Tier.ARCHIVE], query


def test_b19_commands_on_a_missing_store_give_a_clear_error(tmp_path: Path):
    store = StrataStore(tmp_path / "nowhere")
    with pytest.raises(StoreNotFoundError, match="nowhere"):
        store.require_exists()
    assert store.counts() == {"active": 0, "cooled": 0, "archived": 0}
    assert not store.shadow_file.exists()


def test_b20_invalid_config_value_names_the_file_and_key(tmp_path: Path):
    (tmp_path / "strata.json").write_text(json.dumps({"lru_days": "ninety"}))
    with pytest.raises(StrataConfigError, match=r"strata.json: field 'lru_days'"):
        load_config(tmp_path)
    (tmp_path / "strata.json").write_text(json.dumps({"active_dir": "../elsewhere"}))
    with pytest.raises(StrataConfigError, match="active_dir"):
        load_config(tmp_path)


def test_b21_relative_strata_home_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STRATA_HOME", "rel_store")
    from stratagate.strata import detect_base_dir

    assert detect_base_dir() == tmp_path / "rel_store"


def test_b14_second_daemon_is_refused_while_the_first_holds_the_pid_file(store: StrataStore):
    from stratagate.strata.daemon import StrataDaemon
    from stratagate.strata.errors import DaemonRunningError

    first = StrataDaemon(store, interval=3600)
    first._acquire_pid_file()
    try:
        with pytest.raises(DaemonRunningError, match=str(os.getpid())):
            StrataDaemon(StrataStore(store.base_dir, store.config), interval=3600)._acquire_pid_file()
    finally:
        first._release_pid_file()
    assert not store.pid_file.exists()


def test_u10_non_utf8_file_is_quarantined_once_unchanged_and_reported_by_name(store: StrataStore, write_file):
    write_file(store.cooled_root, "bin/latin1.md", "caf\xe9".encode("latin-1"))
    write_file(store.cooled_root, "ok.md", "fine")
    results = {result.path: result for result in evict_all(store)}
    assert results["ok.md"].status == "evicted"
    assert results["bin/latin1.md"].status == "quarantined"
    assert "latin1.md: not UTF-8 text; moved unchanged to" in results["bin/latin1.md"].detail
    assert not (store.cooled_root / "bin/latin1.md").exists()
    assert (store.base_dir / "quarantine/bin/latin1.md").read_bytes() == b"caf\xe9"
    # The next cycle has nothing left to fail on: the daemon logs it once, not every cycle.
    assert evict_all(store) == []


def test_u10_non_utf8_file_name_is_reported_and_never_reaches_the_sidecar_or_index(store: StrataStore):
    os.mkdir(store.active_root / "notes")
    odd = os.path.join(os.fsencode(store.active_root), b"notes/caf\xe9.md")
    with open(odd, "wb") as handle:
        handle.write(b"text")
    store.write("fine.md", "fine")
    assert "`notes/caf\ufffd.md`" in (store.active_root / "index.md").read_text()
    results = {result.status: result for result in janitor.apply_migrate(store, janitor.plan_migrate(store))}
    assert results["migrated"].path == "fine.md"
    assert (
        "file name is not UTF-8" in results["error"].detail and results["error"].path == "notes/caf\ufffd.md"
    )
    assert os.path.exists(odd)
    assert list(json.loads(store.sidecar_file.read_text())) == ["fine.md"]


def test_huge_file_is_refused_by_eviction_and_kept(tmp_path: Path, write_file, immediate):
    store = StrataStore(tmp_path, immediate(max_archive_bytes=1000))
    store.init()
    write_file(store.cooled_root, "big.md", "x" * 5000)
    [result] = evict_all(store)
    assert result.status == "error" and "big.md: 5,000 bytes is over the 1,000-byte limit" in result.detail
    assert (store.cooled_root / "big.md").stat().st_size == 5000


def test_a_plan_applied_at_once_leaves_the_size_check_to_the_apply(tmp_path: Path, write_file, immediate):
    store = StrataStore(tmp_path, immediate(max_archive_bytes=1000))
    store.init()
    write_file(store.cooled_root, "big.md", "x" * 5000)
    write_file(store.cooled_root, "small.md", "x" * 500)
    with store.lock():  # tracked files: the plan needs no `lstat` for their age
        sidecar = store.sidecar()
        for path in ("big.md", "small.md"):
            sidecar.start_tracking(path, 0.0)
        sidecar.save()
    shown = janitor.plan_evict(store)  # a dry run, a preview: the error is in the plan
    assert [(result.path, result.status) for result in shown] == [
        ("big.md", "error"),
        ("small.md", "would_evict"),
    ]
    unchecked = janitor.plan_evict(store, check_sizes=False)
    assert [result.status for result in unchecked] == ["would_evict", "would_evict"]
    applied = janitor.apply_evict(store, unchecked)
    assert [(result.path, result.status) for result in applied] == [
        ("big.md", "error"),
        ("small.md", "evicted"),
    ]
    same = ("path", "status", "detail", "age_days", "access_count")
    assert [getattr(applied[0], name) for name in same] == [getattr(shown[0], name) for name in same]
    assert (store.cooled_root / "big.md").stat().st_size == 5000


def test_corrupt_shadow_index_is_reported_and_rebuilt_from_blobs(store: StrataStore, write_file):
    for name in ("a.md", "b.md"):
        write_file(store.cooled_root, f"notes/{name}", f"content of {name} with zebra")
    evict_all(store)
    store.shadow_file.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorruptShadowIndexError, match="stratum_3_shadow.db"):
        search(store, "zebra")
    report = rebuild_shadow_index(store)
    assert report.indexed == 2 and report.backup.read_bytes().startswith(b"this is not")
    assert sorted(hit.path for hit in search(store, "zebra")) == ["notes/a.md", "notes/b.md"]
    assert read(store, "notes/a.md").content == "content of a.md with zebra"


def test_p1_p2_sidecar_is_written_once_and_shadow_rows_in_one_transaction(
    store: StrataStore, write_file, monkeypatch
):
    for number in range(30):
        write_file(store.active_root, f"n/{number}.md", f"note {number}")
    from stratagate.strata import fsutil, sidecar

    writes: list[Path] = []
    original = fsutil.atomic_write_text
    monkeypatch.setattr(
        sidecar, "atomic_write_text", lambda target, text: (writes.append(target), original(target, text))
    )
    janitor.apply_migrate(store, janitor.plan_migrate(store))
    janitor.apply_evict(store, janitor.plan_evict(store))
    assert writes == [store.sidecar_file, store.sidecar_file]
    connection = sqlite3.connect(store.shadow_file)
    assert connection.execute(
        "SELECT count(DISTINCT evicted_at) > 0, count(*) FROM shadow_index"
    ).fetchone() == (1, 30)
    connection.close()
