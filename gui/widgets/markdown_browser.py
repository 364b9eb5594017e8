"""A QTextBrowser that renders memory text as markdown and can never reach outside the app.

Memory content is untrusted (it comes from conversations), so: markdown-it runs with raw HTML disabled,
`loadResource` refuses every URL that is not embedded (`data:`) or bundled (`qrc:`), and links are never
followed by Qt. Only the app's own `sg://kind/id` links are reported, through `internal_link_activated`;
`javascript:`, `http:`, `file:` and every other link does nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt
from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

INTERNAL_SCHEME = "sg"
LOCAL_RESOURCE_SCHEMES = frozenset({"data", "qrc"})

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> str:
    """Markdown to HTML with raw HTML blocks and inline HTML escaped, never passed through."""
    return _markdown.render(text)


def internal_link(kind: str, identifier: str) -> str:
    """The URL of an in-app jump target, e.g. `sg://event/evt_51`."""
    return f"{INTERNAL_SCHEME}://{kind}/{quote(identifier, safe='')}"


class MarkdownBrowser(QTextBrowser):
    internal_link_activated = Signal(str, str)
    """(kind, id) of a clicked `sg://kind/id` link: "event", "block", "message", "element"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor_clicked)

    def set_markdown_text(self, text: str) -> None:
        self.setHtml(render_markdown(text))

    def loadResource(self, resource_type: int, url: QUrl) -> Any:
        if url.scheme().lower() in LOCAL_RESOURCE_SCHEMES:
            return super().loadResource(resource_type, url)
        return None

    def _on_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme().lower() != INTERNAL_SCHEME:
            return
        identifier = url.path(QUrl.ComponentFormattingOption.FullyDecoded).lstrip("/")
        if url.host() and identifier:
            self.internal_link_activated.emit(url.host(), identifier)
