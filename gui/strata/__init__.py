"""The Strata tier browser: files per tier, markdown preview, shadow-index search, promote/rehydrate/evict."""

from stratagate_gui.strata.browser import StrataBrowser

__all__ = ["StrataBrowser"]
