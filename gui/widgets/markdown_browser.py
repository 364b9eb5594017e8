"""A QTextBrowser that renders memory text as markdown and can never reach outside the app.

Memory content is untrusted (it comes from conversations), so: markdown-it runs with raw HTML disabled,
`loadResource` refuses every URL that is not embedded (`data:`) or bundled (`qrc:`), and links are never
followed by Qt. Only the app's own `sg://kind/id` links are reported, through `internal_link_activated`;
`javascript:`, `http:`, `file:` and every other link does nothing. The app's links carry a key drawn when
the process starts, so an `sg://` link written inside memory text stays text: it cannot jump anywhere.

Rendering runs on the UI thread and markdown-it costs up to ~60 µs per bracket (`![` repeated 100k times
took 10 s), so text longer than `MAX_MARKDOWN_LENGTH` or with more than `MAX_MARKUP_CHARACTERS` markup
characters is shown as plain text with a note, and only its first `MAX_SHOWN_LENGTH` characters.
"""

from __future__ import annotations

import html
import secrets
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt
from PySide6.QtCore import QUrl, QUrlQuery, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

INTERNAL_SCHEME = "sg"
LOCAL_RESOURCE_SCHEMES = frozenset({"data", "qrc"})

MAX_MARKDOWN_LENGTH = 50_000
MAX_MARKUP_CHARACTERS = 2_000
MARKUP_CHARACTERS = "[]!*_`|<>"
MAX_SHOWN_LENGTH = 200_000
_LINK_KEY = secrets.token_hex(8)
"""Marks the links the app itself writes; memory text cannot know it (see the module docstring)."""

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
_default_validate_link = _markdown.validateLink


def _validate_link(url: str) -> bool:
    if url.strip().lower().startswith(f"{INTERNAL_SCHEME}:"):
        return is_internal_link(QUrl(url))
    return _default_validate_link(url)


_markdown.validateLink = _validate_link


def render_markdown(text: str) -> str:
    """Markdown to HTML with raw HTML blocks and inline HTML escaped, never passed through; text too long or
    too dense in markup to render quickly becomes escaped plain text (see the module docstring)."""
    markup = sum(text.count(character) for character in MARKUP_CHARACTERS)
    if len(text) <= MAX_MARKDOWN_LENGTH and markup <= MAX_MARKUP_CHARACTERS:
        return _markdown.render(text)
    note = f"Shown as plain text: {len(text):,} characters ({markup:,} of them markup) are too many to render."
    if len(text) > MAX_SHOWN_LENGTH:
        note += f" Only the first {MAX_SHOWN_LENGTH:,} are shown."
    shown = html.escape(text[:MAX_SHOWN_LENGTH])
    return f'<p><i>{html.escape(note)}</i></p>\n<pre style="white-space: pre-wrap">{shown}</pre>\n'


def internal_link(kind: str, identifier: str) -> str:
    """The URL of an in-app jump target, e.g. `sg://event/evt_51?key=…` (the key marks it as the app's)."""
    return f"{INTERNAL_SCHEME}://{kind}/{quote(identifier, safe='')}?key={_LINK_KEY}"


def is_internal_link(url: QUrl) -> bool:
    """An `sg://` link the app wrote (not one written inside memory text)."""
    return url.scheme().lower() == INTERNAL_SCHEME and QUrlQuery(url).queryItemValue("key") == _LINK_KEY


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
        if not is_internal_link(url):
            return
        identifier = url.path(QUrl.ComponentFormattingOption.FullyDecoded).lstrip("/")
        if url.host() and identifier:
            self.internal_link_activated.emit(url.host(), identifier)
