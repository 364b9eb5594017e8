"""The inspector: the main window with every feature mounted, each through its `mount(ctx, …)`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings

from stratagate_gui.curation.mount import CurationViews
from stratagate_gui.curation.mount import mount as mount_curation
from stratagate_gui.follow import ChangeFeed, LiveFollow
from stratagate_gui.follow import mount as mount_follow
from stratagate_gui.main_window import MainWindow
from stratagate_gui.search_box import SearchBox
from stratagate_gui.search_box import mount as mount_search
from stratagate_gui.strata.mount import mount as mount_strata
from stratagate_gui.views.model_calls import ModelCallsView
from stratagate_gui.views.mount import mount as mount_views

if TYPE_CHECKING:
    from stratagate.live_demo import ScriptedAgent


class InspectorWindow(MainWindow):
    """The window `build_main_window` returns: its features are typed attributes, never looked up by name."""

    def __init__(self, settings: QSettings | None = None, theme: str = "light") -> None:
        super().__init__(settings, theme)
        ctx = self.context
        core = mount_views(ctx)
        self.timeline, self.events, self.elements, self.decay = core.timeline, core.events, core.elements, core.decay
        self.model_calls = ModelCallsView(ctx)
        self.add_view("Model calls", self.model_calls)
        mount_strata(ctx)
        self.curation: CurationViews = mount_curation(ctx, timeline=core.timeline, events=core.events)
        self.follow: LiveFollow
        self.change_feed: ChangeFeed
        self.follow, self.change_feed = mount_follow(ctx)
        self.search_box: SearchBox = mount_search(ctx)
        self.live_agent: ScriptedAgent | None = None
        """The live demo's scripted agent while it runs (`stratagate_gui.live_demo`)."""

    def jump_to(self, kind: str, identifier: str) -> None:
        """Show an item in its view: "event", "block", "message" or "element"."""
        self.context.jumps.go(kind, identifier)
