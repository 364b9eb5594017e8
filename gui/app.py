"""`stratagate-inspector`: start the app on a memory file, a PostgreSQL URL, or the bundled demo."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from stratagate import __version__


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="stratagate-inspector", description="Review, debug and curate agent memory.")
    parser.add_argument("database", nargs="?", help="a StrataGate SQLite file or a SQLAlchemy URL")
    parser.add_argument("--namespace", help="the namespace to show first")
    parser.add_argument("--read-only", action="store_true", help="forensic mode: never write to the database")
    parser.add_argument("--demo", action="store_true", help="open the bundled demo memory")
    parser.add_argument("--live", action="store_true",
                        help="with --demo: a scripted agent writes into a fresh copy of the demo while you watch")
    parser.add_argument(
        "--self-test",
        metavar="OUT.png",
        type=Path,
        help="open the main window offscreen on the demo memory, save a screenshot to OUT.png and exit",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser.parse_args(argv)


NO_DISPLAY = (
    "stratagate-inspector: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset). "
    "Run it in a desktop session, or use --self-test OUT.png, or set QT_QPA_PLATFORM=offscreen."
)


def no_display() -> bool:
    """On Linux without a display server Qt aborts with a misleading xcb hint; say what to do instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    if arguments.self_test:
        # Must be set before QGuiApplication exists; the self-test never needs a display.
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif no_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    from stratagate_gui.application import run

    return run(arguments)


if __name__ == "__main__":
    sys.exit(main())
