"""Hostile Strata state (issue 16 items 4, 6, 12): edits racing an eviction, very long names, overlapping tiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratagate.strata import StrataStore, Tier, janitor
from stratagate.strata import evict_journal as evict_journal_module
from stratagate.strata.cascade import read as read_through_tiers
from stratagate.strata.errors import StrataConfigError
from stratagate.strata.evict_journal import append_batch, close_descriptors, open_journal
from stratagate.strata.fsutil import FolderDescriptors
from stratagate.strata.rehydrate_journal import write_journal as write_rehydrate_journal


def shadow_paths(store: StrataStore) -> list[str]:
    shadow = store.shadow(create=False)
    try:
        return [entry.original_path for entry in shadow.all()]
    finally:
        shadow.close()


def blobs(store: StrataStore) -> list[Path]:
    return sorted(store.archive_root.glob("*.json"))


# Item 4 -------------------------------------------------------------------------------------------------
def test_an_append_between_reading_and_archiving_keeps_the_file_whole_in_cooled(
    store: StrataStore, write_file, monkeypatch
):
    cooled = write_file(store.cooled_root, "notes/log.md", "# Log\n\nfirst line\n")
    write_file(store.cooled_root, "notes/other.md", "# Other\n")

    def journal_then_edit(journal, batch) -> None:
        append_batch(journal, batch)
        # An editor appends after the batch was read and journalled, before the file is rewritten.
        with open(cooled, "a", encoding="utf-8") as handle:
            handle.write("appended while evicting\n")

    monkeypatch.setattr(evict_journal_module, "append_batch", journal_then_edit)
    results = {result.path: result for result in janitor.apply_evict(store, janitor.plan_evict(store))}

    assert results["notes/log.md"].status == "skipped"
    assert "changed while it was being archived" in results["notes/log.md"].detail
    assert results["notes/other.md"].status == "evicted"
    assert cooled.read_text(encoding="utf-8") == "# Log\n\nfirst line\nappended while evicting\n"
    assert shadow_paths(store) == ["notes/other.md"]
    assert len(blobs(store)) == 1
    assert not store.evict_journal_file.exists()

    monkeypatch.undo()
    [again] = janitor.apply_evict(store, janitor.plan_evict(store))
    assert again.status == "evicted"
    assert read_through_tiers(store, "notes/log.md").content.endswith("appended while evicting\n")


def test_recovery_after_a_kill_puts_back_a_file_edited_after_it_was_moved(store: StrataStore, write_file):
    write_file(store.cooled_root, "notes/log.md", "# Log\n")
    write_file(store.cooled_root, "notes/done.md", "# Done\n")
    plan = janitor.plan_evict(store)
    folders = FolderDescriptors()
    stager = janitor._Stager(store, folders.get(str(store.archive_root)), "2026-12-01T00:00:00+00:00")
    staged = [stager.stage(planned.path, folders) for planned in plan]
    with open_journal(store.evict_journal_file) as journal:
        append_batch(journal, staged)
    close_descriptors(staged)
    folders.close()
    edited, done = (
        next(item for item in staged if item.path == path) for path in ("notes/log.md", "notes/done.md")
    )
    # The process died after moving both into archive/; a writer holding the log open appended to it.
    Path(edited.source).rename(edited.blob_file)
    with open(edited.blob_file, "a", encoding="utf-8") as handle:
        handle.write("late line\n")
    Path(done.source).rename(done.blob_file)
    Path(done.blob_file).write_bytes(done.blob[:10] + Path(done.blob_file).read_bytes()[10:])

    with store.lock():  # the next lock holder finishes the batch
        pass

    assert (store.cooled_root / "notes/log.md").read_text(encoding="utf-8") == "# Log\nlate line\n"
    assert shadow_paths(store) == ["notes/done.md"]
    assert json.loads(Path(done.blob_file).read_text(encoding="utf-8"))["content"] == "# Done\n"
    assert not Path(edited.blob_file).exists()


# Crash-loop duplicate (issue 14) ----------------------------------------------------------------------
def test_a_rehydration_killed_after_restoring_is_finished_by_the_next_lock_holder(
    store: StrataStore, write_file
):
    write_file(store.cooled_root, "notes/a.md", "# A\n")
    [evicted] = janitor.apply_evict(store, janitor.plan_evict(store))
    [planned] = janitor.plan_rehydrate(store, ["notes/a.md"])
    # Killed here: the journal listed the row and the file was restored, the row and blob not yet dropped.
    write_rehydrate_journal(store.rehydrate_journal_file, [(planned.shadow_id, store.active_root)])
    (store.active_root / "notes").mkdir()
    (store.active_root / "notes/a.md").write_text("# A\n", encoding="utf-8")

    with store.lock():
        pass

    assert shadow_paths(store) == []
    assert blobs(store) == []
    assert not store.rehydrate_journal_file.exists()
    assert evicted.shadow_id == planned.shadow_id


# Item 6 -------------------------------------------------------------------------------------------------
def test_a_file_whose_name_uses_the_whole_limit_moves_through_every_tier(store: StrataStore, write_file):
    name = "n" * 240 + ".md"  # fits NAME_MAX (255); its temp names must fit too
    relative = f"notes/{name}"
    write_file(store.cooled_root, relative, "# Long\n")
    [evicted] = janitor.apply_evict(store, janitor.plan_evict(store))
    assert evicted.status == "evicted"

    [restored] = janitor.apply_rehydrate(store, janitor.plan_rehydrate(store, [relative]))
    assert restored.status == "rehydrated", restored.detail
    assert (store.active_root / relative).read_text(encoding="utf-8") == "# Long\n"

    store.write(f"notes/{'m' * 251}.md", "written\n")
    assert read_through_tiers(store, f"notes/{'m' * 251}.md").content == "written\n"
    wide = "é" * 125 + ".md"  # 253 bytes in UTF-8: the temp name is cut at a character boundary
    store.write(f"notes/{wide}", "wide\n")
    assert (store.active_root / "notes" / wide).read_text(encoding="utf-8") == "wide\n"


# Item 12 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"active_dir": "cooled"}, "active_dir"),
        ({"active_dir": "x", "cooled_dir": "x"}, "cooled_dir"),
        ({"cooled_dir": "archive"}, "cooled_dir"),
        ({"cooled_dir": "Archive"}, "cooled_dir"),
        ({"stratum_3_archive": "active"}, "stratum_3_archive"),
        ({"stratum_3_shadow_db": "strata.json"}, "stratum_3_shadow_db"),
        ({"active_dir": "strata.log"}, "active_dir"),
    ],
)
def test_overlapping_tiers_in_strata_json_are_refused_naming_the_file_and_key(
    tmp_path: Path, settings: dict, field: str
):
    (tmp_path / "strata.json").write_text(json.dumps(settings))
    with pytest.raises(StrataConfigError) as raised:
        StrataStore(tmp_path)
    assert raised.value.field == field
    assert str(tmp_path / "strata.json") in str(raised.value)
    assert "tiers must not overlap" in str(raised.value)
    assert not (tmp_path / "active").exists()


def test_distinct_custom_tier_names_are_accepted(tmp_path: Path):
    (tmp_path / "strata.json").write_text(json.dumps({"active_dir": "hot", "cooled_dir": "warm"}))
    store = StrataStore(tmp_path)
    store.init()
    assert store.tier_root(Tier.ACTIVE) == tmp_path / "hot"
    assert store.tier_root(Tier.COOLED) == tmp_path / "warm"


# repair-sidecar on a file that is not JSON (issue 14 known gap) ---------------------------------------
def test_repair_keeps_every_entry_still_readable_from_a_truncated_garbled_sidecar(
    store: StrataStore, write_file
):
    from stratagate.strata.repair import repair_sidecar

    for name in ("a.md", "b.md", "c.md", "d.md"):
        write_file(store.cooled_root, f"notes/{name}", name)
    text = (
        '{\n  "notes/a.md": {\n    "access_count": 2,\n    "last_accessed": 1700000000.5\n  },\n'
        "\x00\x00garbage written by a crash\n"
        '  "./notes/b.md": {"last_accessed": 1.7e9, "access_count": 1},\n'
        '  "notes/c.md": {\n    "access_count": 4,\n    "last_accessed": 17'  # truncated mid-entry
    )
    store.sidecar_file.write_text(text, encoding="utf-8")

    report = repair_sidecar(store)

    assert report.backup is not None and report.backup.read_text(encoding="utf-8") == text
    records = store.sidecar().records
    assert {path: (record.access_count, record.last_accessed) for path, record in records.items()} == {
        "notes/a.md": (2, 1700000000.5),
        "notes/b.md": (1, 1.7e9),
    }
    assert report.kept == 2
