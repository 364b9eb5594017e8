"""`stratagate strata ...` end to end with click's runner: output, exit codes, JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from stratagate.cli.main import cli


def run(*arguments: str, input: str | None = None):
    return CliRunner().invoke(cli, list(arguments), input=input)


def test_init_add_read_search_and_lifecycle(tmp_path: Path):
    base = str(tmp_path / "store")
    assert run("strata", "--data-dir", base, "init").exit_code == 0
    (tmp_path / "store/strata.json").write_text(
        json.dumps(
            {"decay_thresholds": {"*": 0}, "lru_decay_thresholds": {"*": 0}, "lru_min_access_count": 0}
        )
    )
    result = run("strata", "--data-dir", base, "add", "notes/a.md", input="# A\nalpha beta\n")
    assert result.exit_code == 0 and "Written to:" in result.output
    assert run("strata", "--data-dir", base, "read", "notes/a.md").output == "# A\nalpha beta\n\n"

    dry = run("strata", "--data-dir", base, "migrate", "--dry-run", "--json")
    assert json.loads(dry.output)["data"]["files"] == [
        {"path": "notes/a.md", "status": "would_migrate", "age_days": 0, "target": "cooled"}
    ]
    assert "would_migrate: 1" not in run("strata", "--data-dir", base, "migrate").output
    assert (tmp_path / "store/cooled/notes/a.md").exists()
    evicted = run("strata", "--data-dir", base, "evict")
    assert evicted.exit_code == 0 and "evicted: 1" in evicted.output

    found = json.loads(run("strata", "--data-dir", base, "search", "alpha", "--json").output)["data"]
    assert [(hit["tier"], hit["path"]) for hit in found] == [("stratum_3", "notes/a.md")]
    restored = run("strata", "--data-dir", base, "rehydrate", found[0]["shadow_id"])
    assert restored.exit_code == 0 and "Restored to 1st Stratum (active): notes/a.md" in restored.output
    status = json.loads(run("strata", "--data-dir", base, "status", "--json").output)["data"]
    assert (status["active_files"], status["stratum_2_blocks"], status["stratum_3_shadows"]) == (1, 0, 0)


def test_bad_input_exits_2_with_the_path_named(tmp_path: Path):
    base = str(tmp_path / "store")
    missing = run("strata", "--data-dir", base, "status")
    assert missing.exit_code == 2 and "no Strata store here" in missing.output + str(
        missing.stderr_bytes or b""
    )
    run("strata", "--data-dir", base, "init")
    traversal = run("strata", "--data-dir", base, "add", "../escape.md", "x")
    assert traversal.exit_code == 2
    assert not (tmp_path / "escape.md").exists()
    (tmp_path / "store/stratum_2_access.json").write_text("{not json")
    (tmp_path / "store/cooled/a.md").write_text("a")
    corrupt = run("strata", "--data-dir", base, "read", "a.md")
    assert corrupt.exit_code == 2
    repaired = run("strata", "--data-dir", base, "repair-sidecar")
    assert repaired.exit_code == 0 and "Backup:" in repaired.output
    assert run("strata", "--data-dir", base, "read", "a.md").exit_code == 0


def test_history_without_a_store_gives_the_hint(tmp_path: Path):
    # The reference's test_cli_history_no_log: a fresh machine, no store and no log, exit 0.
    result = run("strata", "--data-dir", str(tmp_path / "store"), "history")
    assert result.exit_code == 0 and "No daemon log" in result.output
    assert not (tmp_path / "store").exists()


def test_conflicts_exit_1_and_name_the_file(tmp_path: Path):
    base = str(tmp_path / "store")
    run("strata", "--data-dir", base, "init")
    (tmp_path / "store/cooled/p.md").write_text("cooled")
    (tmp_path / "store/active/p.md").write_text("active")
    result = run("strata", "--data-dir", base, "promote", "p.md")
    assert result.exit_code == 1
    assert "conflict" in result.output and "active/p.md already exists" in result.output


def test_config_prints_the_merged_settings(tmp_path: Path):
    base = tmp_path / "store"
    run("strata", "--data-dir", str(base), "init")
    (base / "strata.json").write_text(json.dumps({"decay_thresholds": {"projects": 3}}))
    shown = json.loads(run("strata", "--data-dir", str(base), "--json", "config").output)["data"]
    assert shown["decay_thresholds"]["projects"] == 3 and shown["decay_thresholds"]["*"] == 30
    assert shown["base_dir"] == str(base)


def test_rebuild_index_recovers_search_after_the_shadow_db_is_destroyed(tmp_path: Path):
    base = tmp_path / "store"
    run("strata", "--data-dir", str(base), "init")
    (base / "cooled/notes").mkdir(parents=True)
    (base / "cooled/notes/a.md").write_text("quokka facts")
    assert run("strata", "--data-dir", str(base), "evict", "notes/a.md").exit_code == 0
    (base / "stratum_3_shadow.db").write_bytes(b"garbage" * 100)
    broken = run("strata", "--data-dir", str(base), "search", "quokka")
    assert broken.exit_code == 2 and "rebuild-index" in broken.output
    rebuilt = run("strata", "--data-dir", str(base), "rebuild-index")
    assert rebuilt.exit_code == 0 and "Indexed 1 archived file(s)." in rebuilt.output
    found = json.loads(run("strata", "--data-dir", str(base), "search", "quokka", "--json").output)["data"]
    assert [hit["path"] for hit in found] == ["notes/a.md"]
