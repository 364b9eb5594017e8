"""Curation: pin, forget, archive and supersede as undoable commands, the preview and conflict dialogs, the
triage list and the curation journal view."""
