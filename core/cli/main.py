"""Entry point of the `stratagate` command.

Each command lives in its own module of this package and is added to the group below. A
`StrataGateError` becomes a one-line message on stderr and exit code 2; nothing is half-written because
every command writes through the engine's transactions.
"""

from __future__ import annotations

import sys

import click

from stratagate import __version__
from stratagate.errors import StrataGateError

EXIT_BAD_INPUT = 2


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except StrataGateError as error:
            click.echo(f"stratagate: error: {error}", err=True)
            sys.exit(EXIT_BAD_INPUT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="stratagate")
def cli() -> None:
    """StrataGate agent memory: open, migrate, export, import, search and curate memory files."""


def _register_commands() -> None:
    # Each command module exposes a click command or group named `command`.
    from stratagate.cli import copy, demo, export, importing, journal, locomo, mcp, migrate, search, strata
    from stratagate.cli import open as open_command  # `open` alone would shadow the builtin here

    for module in (demo, journal, strata, open_command, migrate, export, importing, copy, search, mcp):
        cli.add_command(module.command)
    importing.command.add_command(locomo.command)


_register_commands()

if __name__ == "__main__":
    cli()
