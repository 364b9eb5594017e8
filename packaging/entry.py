"""PyInstaller's entry script: the packaged `stratagate-inspector` runs the same `main` as the console script."""

import sys

from stratagate_gui.app import main

if __name__ == "__main__":
    sys.exit(main())
