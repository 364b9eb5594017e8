"""`stratagate search`: read-only retrieval with explanations, from the command line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from stratagate.cli.main import cli
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
