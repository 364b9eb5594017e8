"""Entry point of the `stratagate` command.

Each command lives in its own module of this package and is added to the group below. A
`StrataGateError` becomes a one-line message on stderr and exit code 2; nothing is half-written because
every command writes through the engine's transactions.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from stratagate import __version__
from stratagate.errors import StrataGateError

EXIT_BAD_INPUT = 2

# The engine's arrays never call BLAS, but OpenBLAS starts a thread per core when numpy is imported, and they
# spin: about 0.09 s of CPU in every one-shot command. Set before numpy loads; a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


COMMANDS = {
    "demo": "demo", "journal": "journal", "strata": "strata", "open": "open", "migrate": "migrate",
    "export": "export", "import": "importing", "copy": "copy", "search": "search", "mcp": "mcp",
}
"""Command name -> its module in this package. A command's module is imported only when it runs (or for
--help), so a one-shot `stratagate search` does not pay for the MCP SDK, Strata or the importers."""


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except StrataGateError as error:
            click.echo(f"stratagate: error: {error}", err=True)
            sys.exit(EXIT_BAD_INPUT)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(f"stratagate.cli.{COMMANDS[name]}")
        if name == "import":
            from stratagate.cli import locomo

            module.command.add_command(locomo.command)
        return module.command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="stratagate")
def cli() -> None:
    """StrataGate agent memory: open, migrate, export, import, search and curate memory files."""


def main() -> None:
    """The `stratagate` console script: one command, then the process ends."""
    try:
        cli()
    finally:
        # What is still alive dies with the process, so the collector's last pass over it at exit (every
        # module's objects: a twentieth of a one-shot search's instructions) is skipped. Commands close what
        # they open themselves.
        gc.freeze()


if __name__ == "__main__":
    main()
