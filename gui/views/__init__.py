"""The main views: block timeline, event cards, element histories, decay curves."""
