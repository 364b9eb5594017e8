"""The app's window fixtures, for opening the bad-input corpus in the real main window."""

from tests.gui.conftest import make_window, settings  # noqa: F401  (fixtures)
