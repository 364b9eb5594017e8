"""PyInstaller's entry script. The bundle holds one program under two names: `stratagate-inspector` runs the
app (the same `main` as the console script) and `stratagate`, a link to it, runs the command line, so a user
of the binary alone can import, migrate, export and verify memory files. One program, not two, because each
PyInstaller executable carries its own copy of the Python archive (24 MB)."""

import sys
from pathlib import Path

if __name__ == "__main__":
    if Path(sys.argv[0]).name == "stratagate":
        from stratagate.cli import main as command_line

        command_line.main()
    else:
        from stratagate_gui.app import main

        sys.exit(main())
