"""The engine answers like the TypeScript reference on randomized scenarios (tests/differential).

The committed oracles (tests/fixtures/differential/seed-N.*) were recorded from the reference: the scenario, the
reference's SQLite file and its answers to every call. Read side: the engine answers from the reference's file.
Write side: the engine writes the scenario into its own file with the same callbacks, clock and ids, then
answers. Both run everywhere; where the reference build and Node 22 are present (STRATAGATE_REFERENCE,
STRATAGATE_NODE), fresh random seeds are played through the reference and compared on both sides too.
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
from tests.differential.replay import compare_replay
from tests.differential.run import check_seed

ORACLES = sorted((FIXTURES / "differential").glob("seed-*[0-9].json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("answers_path", ORACLES, ids=lambda path: path.stem)
def test_engine_reads_the_reference_file_like_the_reference(answers_path: Path, tmp_path: Path):
    database = tmp_path / "oracle.sqlite"  # a private copy: the fixture is never opened
    shutil.copyfile(answers_path.with_suffix(".sqlite"), database)
    report = compare_oracle(database, _load(answers_path))
    assert report.compared > 200
    assert report.mismatches == []


@pytest.mark.parametrize("answers_path", ORACLES, ids=lambda path: path.stem)
def test_engine_writes_the_scenario_like_the_reference(answers_path: Path, tmp_path: Path):
    scenario = _load(answers_path.with_suffix(".scenario.json"))
    reference_database = tmp_path / "oracle.sqlite"
    shutil.copyfile(answers_path.with_suffix(".sqlite"), reference_database)
    report, step_differences = compare_replay(scenario, _load(answers_path), reference_database,
                                              tmp_path / "engine.sqlite")
    assert report.compared > 200
    assert (report.mismatches, step_differences, report.documented) == ([], [], [])


def test_oracles_are_committed():
    assert len(ORACLES) >= 3


@pytest.mark.skipif(reference.missing_reason() is not None, reason=reference.missing_reason() or "")
def test_fresh_seeds_match_the_live_reference(tmp_path: Path):
    for seed in [secrets.randbelow(2**31) for _ in range(3)]:
        read, written = check_seed(seed, tmp_path)
        assert (read.mismatches, written.mismatches) == ([], []), f"seed {seed}"
