"""`stratagate search`: read-only retrieval with explanations, from the command line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from stratagate.cli.main import cli
from stratagate.cli.search import EXCLUSIONS_SHOWN, _exclusion_lines
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_ORACLE


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _oracle_call(kind: str, query: str) -> dict:
    oracle = json.loads(REFERENCE_ORACLE.read_text())["namespaces"][REFERENCE_NAMESPACE]["oracle"]
    return next(call for call in oracle if call["kind"] == kind and call["query"] == query and not call.get("options"))


def test_search_explains_hits_and_leaves_the_file_untouched(reference_db_copy: Path):
    before = _sha256(reference_db_copy)
    result = CliRunner().invoke(
        cli, ["search", str(reference_db_copy), "database storage", "--namespace", REFERENCE_NAMESPACE,
              "--explain", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # stderr shows the index being built into the outside cache
    assert "Indexing events" in result.stderr
    expected = _oracle_call("searchEvents", "database storage")["result"]
    assert [hit["id"] for hit in report["hits"]] == [hit["id"] for hit in expected]
    top = report["hits"][0]
    assert top["explain"]["ranks"]["bm25"] == 0
    assert {part["field"] for part in top["explain"]["bm25"]["contributions"]} >= {"title"}
    assert report["explanation"]["tokens"] == ["word:database", "word:storage"]
    assert _sha256(reference_db_copy) == before
    assert sorted(path.name for path in reference_db_copy.parent.iterdir()) == [reference_db_copy.name]


def test_search_elements_as_text(reference_db_copy: Path):
    result = CliRunner().invoke(
        cli, ["search", str(reference_db_copy), "Lisbon", "--namespace", REFERENCE_NAMESPACE, "--kind", "elements"],
    )
    assert result.exit_code == 0, result.output
    assert "Lisbon" in result.stdout
    assert "Indexing element facts" in result.stderr


def test_search_of_a_missing_namespace_exits_2_naming_it(reference_db_copy: Path):
    result = CliRunner().invoke(cli, ["search", str(reference_db_copy), "x", "--namespace", "nope"])
    assert result.exit_code == 2
    assert "nope" in result.output


def test_explain_as_text_shows_a_few_exclusions_of_each_kind_and_counts_the_rest():
    excluded = [{"id": f"evt_{n}", "reason": "filter mismatch: participants"} for n in range(25)]
    excluded += [{"id": f"evt_cut_{n}", "reason": f"cut by limit 6 (fused rank {n + 7})"} for n in range(3)]
    lines = _exclusion_lines(excluded)
    assert lines[:EXCLUSIONS_SHOWN] == [f"  excluded evt_{n}: filter mismatch: participants" for n in range(EXCLUSIONS_SHOWN)]
    assert lines[EXCLUSIONS_SHOWN] == (
        f"  … and {25 - EXCLUSIONS_SHOWN} more excluded: filter mismatch: participants (--json lists them all)")
    assert lines[EXCLUSIONS_SHOWN + 1:] == [f"  excluded evt_cut_{n}: cut by limit 6 (fused rank {n + 7})" for n in range(3)]
