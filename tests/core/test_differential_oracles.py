"""The engine answers like the TypeScript reference on randomized scenarios (tests/differential).

The committed oracles (tests/fixtures/differential/seed-N.*) were recorded from the reference: its SQLite file
and its answers to every call. They run everywhere. Where the reference build and Node 22 are present
(STRATAGATE_REFERENCE, STRATAGATE_NODE), fresh random seeds are played through the reference and compared too.
"""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.differential import reference
from tests.differential.compare import compare_oracle
from tests.differential.run import check_seed

ORACLES = sorted((FIXTURES / "differential").glob("seed-*.json"))


@pytest.mark.parametrize("answers_path", ORACLES, ids=lambda path: path.stem)
def test_recorded_oracle_matches(answers_path: Path, tmp_path: Path):
    database = tmp_path / "oracle.sqlite"  # a private copy: the fixture is never opened
    shutil.copyfile(answers_path.with_suffix(".sqlite"), database)
    answers = json.loads(answers_path.read_text(encoding="utf-8"))
    report = compare_oracle(database, answers)
    assert report.compared > 200
    assert report.mismatches == []


def test_oracles_are_committed():
    assert len(ORACLES) >= 3


@pytest.mark.skipif(reference.missing_reason() is not None, reason=reference.missing_reason() or "")
def test_fresh_seeds_match_the_live_reference(tmp_path: Path):
    seeds = [secrets.randbelow(2**31) for _ in range(3)]
    for seed in seeds:
        report = check_seed(seed, tmp_path)
        assert report.mismatches == [], f"seed {seed}: {report.mismatches[:3]}"
