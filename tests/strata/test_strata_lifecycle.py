"""The janitor's four moves, dry runs, cascade read with auto-promotion, and search-as-access."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stratagate.strata import StrataStore, Tier, janitor
from stratagate.strata.cascade import read
from stratagate.strata.search import search
from stratagate.strata.sidecar import parse_sidecar


def test_migrate_dry_run_moves_nothing_and_live_run_moves_to_cooled(store: StrataStore, write_file):
    write_file(store.active_root, "projects/kynd/requirements.md", "# Requirements\nShip it\n")
    plan = janitor.plan_migrate(store)
    assert [(result.path, result.status) for result in plan] == [
        ("projects/kynd/requirements.md", "would_migrate")
    ]
    assert (store.active_root / "projects/kynd/requirements.md").exists()
    assert not store.sidecar_file.exists()

    results = janitor.apply_migrate(store, plan)
    assert [result.status for result in results] == ["migrated"]
    assert not (store.active_root / "projects/kynd/requirements.md").exists()
    assert (store.cooled_root / "projects/kynd/requirements.md").read_text() == "# Requirements\nShip it\n"
    sidecar = json.loads(store.sidecar_file.read_text())
    assert sidecar["projects/kynd/requirements.md"]["access_count"] == 0


def test_the_sidecar_a_move_saved_is_read_back_as_written_and_a_later_writer_is_seen(
    store: StrataStore, write_file
):
    """A save seeds the store's parsed-sidecar cache; the cache must equal the file, and a write by another
    store object (another process) must still be read from disk."""
    for name in ("a.md", "b.md"):
        write_file(store.active_root, f"notes/{name}", "x")
    janitor.apply_migrate(store, janitor.plan_migrate(store))
    on_disk = parse_sidecar(store.sidecar_file, store.sidecar_file.read_text(encoding="utf-8"))
    assert store.sidecar().records == on_disk and set(on_disk) == {"notes/a.md", "notes/b.md"}

    other = StrataStore(store.base_dir, store.config)
    with other.lock():
        sidecar = other.sidecar()
        sidecar.record_access("notes/a.md", 1.0)
        sidecar.save()
    assert store.sidecar().records["notes/a.md"].access_count == 1


def test_migrate_uses_longest_prefix_threshold(tmp_path, write_file, immediate):
    store = StrataStore(tmp_path, immediate(decay_thresholds={"projects": 14, "*": 30}))
    store.init()
    write_file(store.active_root, "projects/young.md", "x", days_old=10)
    write_file(store.active_root, "projects/old.md", "x", days_old=14)
    write_file(store.active_root, "notes/mid.md", "x", days_old=20)
    write_file(store.active_root, "projects/script.py", "x", days_old=400)
    assert [result.path for result in janitor.plan_migrate(store)] == ["projects/old.md"]


def test_evict_archives_blob_and_shadow_row_then_rehydrate_restores(store: StrataStore, write_file):
    write_file(store.cooled_root, "gtd/call_bob-now.md", "Call Bob about the funding round\n")
    results = janitor.apply_evict(store, janitor.plan_evict(store))
    assert [result.status for result in results] == ["evicted"]
    assert not (store.cooled_root / "gtd/call_bob-now.md").exists()
    blob = json.loads((store.archive_root / f"{results[0].shadow_id}.json").read_text())
    assert blob["original_path"] == "gtd/call_bob-now.md"
    assert blob["content"] == "Call Bob about the funding round\n"
    assert blob["tags"] == ["gtd", "Call Bob Now"]

    hits = search(store, "funding")
    assert [(hit.tier, hit.path, hit.score) for hit in hits] == [(Tier.ARCHIVE, "gtd/call_bob-now.md", 0.5)]

    restored = janitor.apply_rehydrate(
        store, janitor.plan_rehydrate(store, ["gtd/call_bob-now.md"], Tier.COOLED)
    )
    assert [result.status for result in restored] == ["rehydrated"]
    assert (store.cooled_root / "gtd/call_bob-now.md").read_text() == "Call Bob about the funding round\n"
    assert store.counts()["archived"] == 0
    assert store.sidecar().get("gtd/call_bob-now.md").access_count == 0


def test_evict_respects_lru_days_and_access_count(tmp_path, write_file, immediate):
    store = StrataStore(tmp_path, immediate(lru_decay_thresholds={"*": 90}, lru_min_access_count=1))
    store.init()
    write_file(store.cooled_root, "idle.md", "x", days_old=95)
    write_file(store.cooled_root, "recent.md", "x", days_old=10)
    write_file(store.cooled_root, "popular.md", "x", days_old=95)
    sidecar = store.sidecar()
    for _ in range(2):
        sidecar.record_access("popular.md", now=0)
    sidecar.save()
    assert [result.path for result in janitor.plan_evict(store)] == ["idle.md"]


def test_cascade_read_counts_accesses_and_third_read_promotes(store: StrataStore, write_file):
    write_file(store.cooled_root, "entities/ada.md", "# Ada\nMathematician\n", days_old=40)
    first = read(store, "entities/ada.md")
    assert (first.source, first.access_count, first.promoted) == (Tier.COOLED, 1, False)
    read(store, "entities/ada.md")
    third = read(store, "entities/ada.md")
    assert (third.access_count, third.promoted) == (3, True)
    assert (store.active_root / "entities/ada.md").read_text() == "# Ada\nMathematician\n"
    assert not (store.cooled_root / "entities/ada.md").exists()
    assert store.sidecar().get("entities/ada.md") is None
    assert "`entities/ada.md` — Ada" in (store.active_root / "index.md").read_text()
    # A promoted file is fresh, so the next migration (30-day threshold) leaves it alone.
    store.config.decay_thresholds = {"*": 30}
    assert janitor.plan_migrate(store) == []


def test_read_without_tracking_has_no_side_effects(store: StrataStore, write_file):
    write_file(store.cooled_root, "a.md", "alpha")
    for _ in range(5):
        assert read(store, "a.md", record_access=False).content == "alpha"
    assert store.sidecar().get("a.md") is None
    assert (store.cooled_root / "a.md").exists()


def test_cascade_read_of_archived_path_rehydrates_into_active(store: StrataStore, write_file):
    write_file(store.cooled_root, "projects/old.md", "old plan")
    janitor.apply_evict(store, janitor.plan_evict(store))
    result = read(store, "projects/old.md")
    assert (result.source, result.rehydrated, result.content) == (Tier.ARCHIVE, True, "old plan")
    assert (store.active_root / "projects/old.md").read_text() == "old plan"
    assert list(store.archive_root.iterdir()) == []


def test_search_counts_cooled_hits_as_accesses_and_batch_promote_picks_them(store: StrataStore, write_file):
    write_file(store.cooled_root, "projects/koda.md", "koda react shop")
    write_file(store.active_root, "projects/react.md", "react everywhere")
    for _ in range(3):
        hits = search(store, "koda react")
    assert [(hit.tier, hit.score) for hit in hits] == [(Tier.COOLED, 2.1), (Tier.ACTIVE, 1.6)]
    assert store.sidecar().get("projects/koda.md").access_count == 3
    plan = janitor.plan_promote(store)
    assert [(result.path, result.status) for result in plan] == [("projects/koda.md", "would_promote")]
    assert [result.status for result in janitor.apply_promote(store, plan)] == ["promoted"]


def test_search_without_tracking_records_nothing(store: StrataStore, write_file):
    write_file(store.cooled_root, "k.md", "koda")
    assert [hit.path for hit in search(store, "koda", record_access=False)] == ["k.md"]
    assert not store.sidecar_file.exists()


def test_maintenance_promotes_before_migrating(tmp_path, write_file, immediate):
    store = StrataStore(tmp_path, immediate(decay_thresholds={"*": 100}))
    store.init()
    write_file(store.cooled_root, "hot.md", "hot")
    sidecar = store.sidecar()
    for _ in range(3):
        sidecar.record_access("hot.md", now=1)
    sidecar.save()
    report = janitor.run_maintenance(store, dry_run=False)
    assert report.totals() == {"total_promoted": 1, "total_migrated": 0, "total_evicted": 0}
    assert (store.active_root / "hot.md").exists()


def test_dry_run_maintenance_changes_no_file(store: StrataStore, write_file):
    write_file(store.active_root, "a/x.md", "x")
    write_file(store.cooled_root, "b/y.md", "y")
    before = sorted(str(path) for path in store.base_dir.rglob("*"))
    report = janitor.run_maintenance(store, dry_run=True)
    assert report.totals() == {"total_promoted": 0, "total_migrated": 1, "total_evicted": 1}
    assert sorted(str(path) for path in store.base_dir.rglob("*") if path.name != "strata.lock") == [
        path for path in before if not path.endswith("strata.lock")
    ]


def test_eviction_batches_stay_inside_a_low_open_file_limit(tmp_path: Path):
    """Staged files stay open until their batch is archived: with 200 descriptors allowed (soft = hard, so
    the limit cannot be raised), 300 files are archived in several batches without running out."""
    script = f"""
import resource
from pathlib import Path
resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))
from stratagate.strata import StrataStore, janitor
from tests.strata.conftest import immediate_config
store = StrataStore(Path({str(tmp_path / "strata_data")!r}), immediate_config())
store.init()
for number in range(300):
    (store.cooled_root / f"n{{number:03d}}.md").write_text(f"note {{number}}")
results = janitor.apply_evict(store, janitor.plan_evict(store))
print(sorted({{result.status for result in results}}), len(results), store.counts()["archived"])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['evicted']", "300", "300"]


def test_eviction_batches_grow_then_halve_toward_the_end():
    schedule, left = [janitor.EVICT_EDGE_BATCH_FILES], 20_000 - janitor.EVICT_EDGE_BATCH_FILES
    while left > 0:
        schedule.append(min(janitor._next_batch_files(left, 2048, schedule[-1]), left))
        left -= schedule[-1]
    assert sum(schedule) == 20_000
    # the reader keeps ahead of the rewrite from the first batch on ...
    assert schedule[:8] == [128, 192, 288, 432, 648, 972, 1458, 2048]
    # ... and the last batches are rewritten after the last read
    assert schedule[-5:] == [898, 449, 225, 128, 97]
    few_descriptors = 25
    assert janitor._next_batch_files(300, few_descriptors, 25) == few_descriptors
    assert janitor._next_batch_files(20, few_descriptors, 25) == few_descriptors


def test_a_tapered_multi_batch_eviction_archives_every_file_once(store: StrataStore, write_file, monkeypatch):
    monkeypatch.setattr(janitor, "EVICT_EDGE_BATCH_FILES", 2)
    monkeypatch.setattr(janitor, "_evict_batch_files", lambda: 8)
    for number in range(41):
        write_file(store.cooled_root, f"notes/n{number:02d}.md", f"# Note {number}\n")
    results = janitor.apply_evict(store, janitor.plan_evict(store))
    assert [result.status for result in results] == ["evicted"] * 41
    assert len({result.shadow_id for result in results}) == 41
    assert store.counts()["archived"] == 41 and not store.evict_journal_file.exists()
    assert not list(store.cooled_root.rglob("*.md"))
