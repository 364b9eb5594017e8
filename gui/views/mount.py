"""Mount the core views (Timeline, Events, Elements, Decay): their tabs, their jump targets, and the Decay
view plotting what is selected in the other three."""

from __future__ import annotations

from dataclasses import dataclass

from stratagate_gui.context import AppContext
from stratagate_gui.views.decay import DecayView
from stratagate_gui.views.elements import ElementsView
from stratagate_gui.views.events import EventsView
from stratagate_gui.views.timeline import TimelineView


@dataclass
class CoreViews:
    timeline: TimelineView
    events: EventsView
    elements: ElementsView
    decay: DecayView


def mount(ctx: AppContext) -> CoreViews:
    # The event list first: built first, it hears of a new memory first, so its first page (a quick read) is
    # queued before the timeline's block spans and its rows are read while the timeline draws.
    events = EventsView(ctx)
    views = CoreViews(TimelineView(ctx), events, ElementsView(ctx), DecayView(ctx))
    ctx.host.add_view("Timeline", views.timeline)
    ctx.host.add_view("Events", views.events)
    ctx.host.add_view("Elements", views.elements)
    ctx.host.add_view("Decay", views.decay)
    ctx.jumps.register("event", views.events, views.events.select_event)
    ctx.jumps.register("block", views.timeline, views.timeline.select_block)
    ctx.jumps.register("message", views.timeline, views.timeline.show_message)
    ctx.jumps.register("element", views.elements, views.elements.select_element)
    for view in (views.events, views.elements):
        view.jump_requested.connect(ctx.jumps.go)
    views.events.selection_changed.connect(lambda ids: views.decay.show_items("event", ids))
    views.elements.element_selected.connect(lambda element: views.decay.show_items("element", [element]))
    views.timeline.block_selected.connect(lambda block: views.decay.show_items("block", [block]))
    return views
