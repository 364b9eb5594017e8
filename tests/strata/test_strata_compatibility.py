"""Data written by the reference Strata (layout, sidecar, blob, shadow DB, strata.json) is read and moved correctly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from stratagate.strata import StrataStore, Tier, detect_base_dir, janitor, load_config
from stratagate.strata.cascade import read
from stratagate.strata.search import search

REFERENCE_SCHEMA = """
CREATE TABLE IF NOT EXISTS shadow_index (id TEXT PRIMARY KEY, original_path TEXT NOT NULL,
    keywords TEXT DEFAULT '[]', archive_path TEXT NOT NULL, summary_preview TEXT DEFAULT '', evicted_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_shadow_keywords ON shadow_index(original_path);
CREATE VIRTUAL TABLE IF NOT EXISTS shadow_fts USING fts5(keywords, summary_preview, content='shadow_index', content_rowid='rowid');
CREATE TRIGGER IF NOT EXISTS shadow_ai AFTER INSERT ON shadow_index BEGIN
    INSERT INTO shadow_fts(rowid, keywords, summary_preview) VALUES (new.rowid, new.keywords, new.summary_preview); END;
CREATE TRIGGER IF NOT EXISTS shadow_ad AFTER DELETE ON shadow_index BEGIN
    INSERT INTO shadow_fts(shadow_fts, rowid, keywords, summary_preview)
    VALUES('delete', old.rowid, old.keywords, old.summary_preview); END;
"""


def reference_store(base: Path) -> None:
    """A data dir as the reference leaves it after `init`, a migration and an eviction (relative archive_path)."""
    for folder in ("active/projects", "cooled/entities", "archive"):
        (base / folder).mkdir(parents=True)
    (base / "strata.json").write_text(
        json.dumps({"search_backend": "fts5", "qmd_reranker": None, "lru_days": 90}, indent=2)
    )
    (base / "active/projects/plan.md").write_text("# Plan\nship\n")
    (base / "cooled/entities/ada.md").write_text("# Ada\n")
    (base / "stratum_2_access.json").write_text(
        json.dumps({"./entities/ada.md": {"access_count": 1, "last_accessed": 1700000000.5}}, indent=2)
    )
    blob = {
        "original_path": "gtd/stripe-payments.md",
        "content": "Stripe payments for e-commerce checkout",
        "archived_at": "2024-01-02T03:04:05.123456+00:00",
        "tags": ["gtd", "Stripe Payments"],
    }
    (base / "archive/839201746512.json").write_text(json.dumps(blob, indent=2))
    connection = sqlite3.connect(base / "stratum_3_shadow.db")
    connection.executescript(REFERENCE_SCHEMA)
    connection.execute(
        "INSERT INTO shadow_index VALUES (?, ?, ?, ?, ?, ?)",
        (
            "4f8b1c2e-0000-4000-8000-000000000001",
            "gtd/stripe-payments.md",
            json.dumps(blob["tags"]),
            "strata_data/archive/839201746512.json",
            blob["content"][:200],
            "2024-01-02T03:04:05+00:00",
        ),
    )
    connection.commit()
    connection.close()


def test_reference_store_is_listed_searched_and_restored(tmp_path: Path):
    reference_store(tmp_path)
    store = StrataStore(tmp_path)
    assert store.config.search_backend == "fts5"
    assert [file.path for file in store.list_files(Tier.ACTIVE)] == ["projects/plan.md"]
    cooled = store.list_files(Tier.COOLED)
    # The reference's non-canonical key `./entities/ada.md` is the same file.
    assert [(file.path, file.access_count) for file in cooled] == [("entities/ada.md", 1)]
    hits = search(store, "e-commerce", record_access=False)
    assert [(hit.tier, hit.path) for hit in hits] == [(Tier.ARCHIVE, "gtd/stripe-payments.md")]
    # The relative archive_path was written from another cwd: the blob is found by name in archive/.
    result = read(store, "gtd/stripe-payments.md")
    assert result.rehydrated and result.content == "Stripe payments for e-commerce checkout"
    assert store.counts()["archived"] == 0


def test_our_shadow_rows_and_blobs_are_what_the_reference_reads(store: StrataStore, write_file):
    write_file(store.cooled_root, "projects/kynd-dashboard/requirements.md", "x" * 300)
    [result] = janitor.apply_evict(store, janitor.plan_evict(store))
    connection = sqlite3.connect(store.shadow_file)
    row = connection.execute(
        "SELECT id, original_path, keywords, archive_path, summary_preview FROM shadow_index"
    ).fetchone()
    fts = connection.execute("SELECT rowid FROM shadow_fts WHERE shadow_fts MATCH 'projects'").fetchall()
    connection.close()
    assert row[0] == result.shadow_id
    assert row[1] == "projects/kynd-dashboard/requirements.md"
    assert json.loads(row[2]) == ["projects", "Requirements"]
    assert Path(row[3]) == store.archive_root / f"{result.shadow_id}.json" and Path(row[3]).is_absolute()
    assert row[4] == "x" * 200
    assert len(fts) == 1
    blob = json.loads(Path(row[3]).read_text())
    assert set(blob) == {"original_path", "content", "archived_at", "tags"}
    assert blob["archived_at"].endswith("+00:00")


def test_sidecar_keeps_the_reference_format(store: StrataStore, write_file):
    write_file(store.active_root, "a.md", "a")
    janitor.apply_migrate(store, janitor.plan_migrate(store))
    text = store.sidecar_file.read_text()
    data = json.loads(text)
    assert set(data["a.md"]) == {"access_count", "last_accessed"}
    assert isinstance(data["a.md"]["last_accessed"], float)
    assert text.startswith('{\n  "a.md": {\n    "access_count": 0,')


def test_base_dir_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("STRATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert detect_base_dir(tmp_path) == tmp_path / "home" / ".strata"
    (tmp_path / "strata_data").mkdir()
    assert detect_base_dir(tmp_path) == tmp_path / "strata_data"
    monkeypatch.setenv("STRATA_HOME", str(tmp_path / "elsewhere"))
    assert detect_base_dir(tmp_path) == tmp_path / "elsewhere"


def test_index_md_follows_the_reference_format(store: StrataStore):
    store.write("projects/kynd/requirements.md", "# Requirements\n\nShip the dashboard by Friday.\n")
    store.write("hello.md", "# Hello\n")
    index = (store.active_root / "index.md").read_text()
    assert index.startswith("# Strata — Active Memory Index\n\n_Last updated: ")
    assert (
        "## Projects\n\n- `projects/kynd/requirements.md` — Requirements\n  Ship the dashboard by Friday\n"
        in index
    )
    assert "hello.md" not in index


def test_config_merges_partial_dicts_onto_defaults(tmp_path: Path):
    (tmp_path / "strata.json").write_text(
        json.dumps({"decay_thresholds": {"projects": 1}, "qmd_reranker": "x"})
    )
    config = load_config(tmp_path)
    assert config.decay_days("projects/a.md") == 1
    assert config.decay_days("misc/a.md") == 30
    assert config.decay_days("gtd/a.md") == 7
