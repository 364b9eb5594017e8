"""Run the differential check over many seeds against the local reference build.

    .venv/bin/python -m tests.differential.run --seeds 1000-1049
    .venv/bin/python -m tests.differential.run --seeds 7,8 --save tests/fixtures/differential

For each seed: generate the scenario (scenario.py), play it through the reference (driver.mjs, Node 22 with
TZ=UTC), then have the engine answer the same calls from the reference's SQLite file (compare.py). Prints the
calls compared and matched per seed and in total, and each mismatch; exits 1 when any call differs.
`--save` keeps each seed's oracle (seed-N.sqlite and seed-N.json) as a regression fixture.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import click

from tests.differential import reference
from tests.differential.compare import Report, compare_oracle
from tests.differential.scenario import scenario


def record_oracle(seed: int, directory: Path) -> tuple[Path, dict]:
    """Play seed's scenario through the reference; the oracle's SQLite file and answers."""
    build = reference.reference_build()
    if build is None:
        raise RuntimeError(reference.missing_reason())
    scenario_path = directory / f"seed-{seed}.scenario.json"
    database = directory / f"seed-{seed}.sqlite"
    answers_path = directory / f"seed-{seed}.json"
    scenario_path.write_text(json.dumps(scenario(seed), ensure_ascii=False), encoding="utf-8")
    reference.run_node(reference.HERE / "driver.mjs", str(build), str(scenario_path), str(database), str(answers_path))
    return database, json.loads(answers_path.read_text(encoding="utf-8"))


def check_seed(seed: int, directory: Path) -> Report:
    database, answers = record_oracle(seed, directory)
    return compare_oracle(database, answers)


def _seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds += list(range(int(low), int(high or low) + 1))
    return seeds


@click.command()
@click.option("--seeds", required=True, help="Seeds, e.g. 1000-1049 or 3,7,9.")
@click.option("--save", type=click.Path(file_okay=False, path_type=Path), help="Keep each oracle here.")
def main(seeds: str, save: Path | None) -> None:
    total = Report()
    with tempfile.TemporaryDirectory() as scratch:
        for seed in _seeds(seeds):
            report = check_seed(seed, Path(scratch))
            total.add(report)
            click.echo(f"seed {seed}: {report.matched}/{report.compared} calls match")
            for mismatch in report.mismatches:
                click.echo("  " + json.dumps(mismatch, ensure_ascii=False)[:1500])
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                for suffix in (".sqlite", ".json"):
                    shutil.copyfile(Path(scratch) / f"seed-{seed}{suffix}", save / f"seed-{seed}{suffix}")
    click.echo(f"total: {total.matched}/{total.compared} calls match; compared by kind: {dict(total.by_kind)}")
    sys.exit(1 if total.mismatches else 0)


if __name__ == "__main__":
    main()
