"""`stratagate demo OUT`: write the bundled demo memory to a file."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("demo")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def command(out: Path, force: bool) -> None:
    """Write the demo memory (built from resources/demo) to OUT."""
    from stratagate.demo import build_demo_database

    build_demo_database(out, overwrite=force)
    click.echo(str(out))
