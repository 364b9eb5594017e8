"""`stratagate strata` as a drop-in for the reference's `strata` (issue 14): defaults, commands, streams, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from stratagate.cli.main import cli


@pytest.fixture
def strata(tmp_path: Path, monkeypatch):
    """`strata(*args, input=None)` run with cwd = tmp_path, HOME = tmp_path/home and no STRATA_HOME."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("STRATA_HOME", raising=False)

    def run(*arguments: str, input: str | None = None):
        return CliRunner().invoke(cli, ["strata", *arguments], input=input)

    return run


def envelope(result) -> dict:
    [line] = result.stdout.strip().splitlines()
    return json.loads(line)


def test_plain_init_creates_strata_data_in_the_current_folder(strata, tmp_path: Path):
    result = strata("init", "--non-interactive")
    assert result.exit_code == 0
    assert f"Initialized local Strata at {tmp_path / 'strata_data'}" in result.stdout
    assert (tmp_path / "strata_data/active/index.md").exists()
    assert json.loads((tmp_path / "strata_data/strata.json").read_text())["search_backend"] == "qmd"
    assert not (tmp_path / "home/.strata").exists()
    # Every other command now finds ./strata_data (spec §1.1, step 2).
    assert strata("add", "a.md", "alpha").stdout == f"Written to: {tmp_path / 'strata_data/active/a.md'}\n"


def test_init_global_and_strata_home(strata, tmp_path: Path, monkeypatch):
    assert strata("init", "-g", "--non-interactive").exit_code == 0
    assert (tmp_path / "home/.strata/active/index.md").exists()
    assert not (tmp_path / "strata_data").exists()
    # Without ./strata_data, commands fall back to ~/.strata.
    assert str(tmp_path / "home/.strata") in envelope(strata("--json", "status"))["data"]["base_dir"]

    monkeypatch.setenv("STRATA_HOME", str(tmp_path / "elsewhere"))
    assert strata("init", "--global", "--non-interactive").exit_code == 0  # STRATA_HOME wins over --global
    assert (tmp_path / "elsewhere/active").is_dir()


def test_init_without_a_terminal_asks_nothing_and_uses_the_built_in_search(strata, tmp_path: Path):
    result = strata("init", input="1\n")
    assert result.exit_code == 0 and "Select search backend" not in result.stdout
    assert json.loads((tmp_path / "strata_data/strata.json").read_text())["search_backend"] == "fts5"


def test_banner_unknown_command_and_agent_help(strata):
    banner = strata()
    assert banner.exit_code == 0 and "strata init" in banner.stdout
    unknown = strata("frobnicate")
    assert unknown.exit_code == 1
    assert unknown.stdout.startswith("Unknown command: frobnicate") and "strata init" in unknown.stdout
    agent = strata("--agent-help")
    assert agent.exit_code == 0 and agent.stdout.startswith("# Strata memory")
    assert envelope(strata("agent-help", "--json"))["data"]["help"].startswith("# Strata memory")


def test_add_text_list_and_read(strata, tmp_path: Path):
    strata("init", "--non-interactive")
    note = strata("add", "--text", "remember", "the", "milk")
    assert note.exit_code == 0
    [written] = re.findall(r"Written to: (\S+)", note.stdout)
    assert re.fullmatch(r"quick-note-\d+\.md", Path(written).name)
    assert Path(written).read_text() == "remember the milk"

    strata("add", "projects/a.md", "# A")
    assert strata("list", "projects").stdout == "  [file] projects/a.md (3b)\n"
    assert "  [dir] projects (0b)" in strata("list").stdout
    assert strata("list", "nothing").stdout == "Empty or not found: nothing\n"
    entries = envelope(strata("--json", "list", "projects"))["data"]
    assert [(entry["name"], entry["type"], entry["size"]) for entry in entries] == [("a.md", "file", 3)]

    missing = strata("read", "nope.md")
    assert (missing.exit_code, missing.stdout, missing.stderr) == (1, "File not found: nope.md\n", "")
    assert envelope(strata("read", "projects/a.md", "--json"))["data"]["content"] == "# A"


def test_cooled_files_list_stratum_2_and_forget(strata, tmp_path: Path):
    strata("init", "--non-interactive")
    assert strata("list-stratum-2").stdout == "No 2nd Stratum files.\n"
    (tmp_path / "strata_data/cooled/p").mkdir()
    (tmp_path / "strata_data/cooled/p/old.md").write_text("old facts")
    assert re.fullmatch(r"  p/old\.md \(9b, modified \d{4}-\d\d-\d\d\)\n", strata("list-stratum-2").stdout)

    missing = strata("forget", "p/none.md")
    assert (missing.exit_code, missing.stdout) == (1, "File not found in 2nd Stratum: p/none.md\n")
    forgotten = strata("forget", "p/old.md")
    assert forgotten.exit_code == 0 and forgotten.stdout.startswith("Archived to: ")
    [hit] = envelope(strata("--json", "query", "old", "facts"))["data"]
    assert (hit["tier"], hit["metadata"]["memory_id"], hit["metadata"]["_needs_rehydration"]) == (
        "stratum_3",
        "p/old.md",
        True,
    )
    assert hit["source"].startswith("archive:")


def test_search_without_words_prints_usage_or_a_json_error(strata):
    strata("init", "--non-interactive")
    assert strata("search").exit_code == 0
    failed = strata("--json", "query")
    assert failed.exit_code == 1 and envelope(failed)["status"] == "error"


def test_json_errors_use_the_envelope_and_bad_input_exits_2(strata):
    strata("init", "--non-interactive")
    result = strata("add", "../escape.md", "x", "--json")
    assert result.exit_code == 2
    answer = envelope(result)
    assert (answer["status"], answer["command"]) == ("error", "add") and "escape.md" in answer["message"]


def test_config_get_and_set(strata, tmp_path: Path):
    strata("init", "--non-interactive")
    shown = strata("config")
    assert "base_dir" in shown.stdout and "Decay thresholds" in shown.stdout
    assert strata("config", "get", "search_backend").stdout == "qmd\n"
    assert (
        strata("config", "set", "decay_thresholds.projects", "3").stdout
        == "Set decay_thresholds.projects = 3\n"
    )
    assert strata("config", "set", "promotion_threshold", "5").exit_code == 0
    saved = json.loads((tmp_path / "strata_data/strata.json").read_text())
    assert saved["decay_thresholds"]["projects"] == 3 and saved["decay_thresholds"]["*"] == 30
    assert saved["promotion_threshold"] == 5  # the reference never wrote this key (B-5)
    assert strata("config", "get", "decay_thresholds.projects").stdout == "3\n"

    refused = strata("config", "set", "cooled_dir", "archive")
    assert refused.exit_code == 2 and "tiers must not overlap" in refused.stderr
    assert strata("config", "set", "lru_days", "-4").exit_code == 2
    assert strata("config", "get", "no_such_key").exit_code == 2
    assert json.loads((tmp_path / "strata_data/strata.json").read_text()) == saved


def test_cost_counts_only_live_cycles(strata, tmp_path: Path):
    strata("init", "--non-interactive")
    assert strata("cost").stdout == "No daemon activity yet. Run 'strata serve' first.\n"
    (tmp_path / "strata_data/strata.log").write_text(
        "2026-01-15 10:00:00 [INFO] [Cycle 1] Starting maintenance (DRY RUN)\n"
        "2026-01-15 10:00:00 [INFO] [Cycle 1] Migrated: 7, Evicted: 7\n"
        "2026-01-15 10:15:00 [INFO] [Cycle 2] Starting maintenance (LIVE)\n"
        "2026-01-15 10:15:00 [INFO] [Cycle 2] Migrated: 5, Evicted: 2\n"
        "2026-01-16 09:00:00 [INFO] [Cycle 2] Starting maintenance (LIVE)\n"  # a restarted daemon
        "2026-01-16 09:00:00 [INFO] [Cycle 2] Migrated: 1, Evicted: 0\n"
    )
    shown = strata("cost").stdout
    assert "Daemon cycles:     2" in shown and "Files migrated:    6" in shown and "13,000 tokens" in shown
    data = envelope(strata("--json", "cost"))["data"]
    assert data["tokens_saved_range"]["value"] == "10,400 - 15,600"


@pytest.mark.parametrize(
    "command",
    [
        ["qmd-setup"],
        ["qmd-status"],
        ["distiller", "run"],
        ["skill", "install"],
        ["pi-install", "--force"],
        ["install-service"],
        ["config", "set", "llm.apiKey", "x"],
    ],
)
def test_outside_services_answer_not_available_without_a_traceback(strata, command):
    strata("init", "--non-interactive")
    result = strata(*command)
    assert result.exit_code == 1
    assert result.stderr.startswith("not available in this build: ") and "Traceback" not in result.output


def test_lifecycle_commands_print_the_reference_summary(strata, tmp_path: Path):
    strata("init", "--non-interactive")
    (tmp_path / "strata_data/strata.json").write_text(json.dumps({"decay_thresholds": {"*": 0, "notes": 0}}))
    strata("add", "notes/a.md", "a")
    assert "Migrated: 1 files" in strata("migrate", "--dry-run").stdout
    data = envelope(strata("--json", "migrate"))["data"]
    assert (data["count"], data["dry_run"], data["files"][0]["status"]) == (1, False, "migrated")
    assert "Evicted: 0 memories" in strata("evict").stdout
    maintenance = strata("maintenance", "--dry-run").stdout
    assert "Promoted: 0 files" in maintenance and "Migrated: 0 files" in maintenance
