"""Memory text is untrusted: the markdown browser renders it without HTML, remote loads or script links."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

from stratagate_gui.widgets.markdown_browser import MarkdownBrowser, internal_link, render_markdown


def test_raw_html_is_escaped_not_rendered():
    html = render_markdown('<script>alert(1)</script> <img src="http://evil.example/x.png">')
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_javascript_links_are_not_turned_into_links():
    html = render_markdown("[click](javascript:alert(1))")
    assert "href" not in html


def test_remote_and_file_resources_are_refused(qtbot):
    browser = MarkdownBrowser()
    qtbot.addWidget(browser)
    image = QTextDocument.ResourceType.ImageResource
    assert browser.loadResource(image, QUrl("http://example.org/tracker.png")) is None
    assert browser.loadResource(image, QUrl("https://example.org/tracker.png")) is None
    assert browser.loadResource(image, QUrl("file:///etc/passwd")) is None
    # A markdown image pointing at a server renders as a broken image, never a request.
    browser.set_markdown_text("![pixel](http://example.org/tracker.png)")
    assert "tracker" in browser.toHtml()


def test_only_internal_links_are_reported(qtbot):
    browser = MarkdownBrowser()
    qtbot.addWidget(browser)
    seen: list[tuple[str, str]] = []
    browser.internal_link_activated.connect(lambda kind, identifier: seen.append((kind, identifier)))
    for url in ("javascript:alert(1)", "http://example.org/", "file:///etc/passwd", internal_link("event", "evt_51")):
        browser.anchorClicked.emit(QUrl(url))
    browser.anchorClicked.emit(QUrl(internal_link("event", "blk_15:evt:0 (copy)/2")))
    assert seen == [("event", "evt_51"), ("event", "blk_15:evt:0 (copy)/2")]
    assert not browser.openLinks() and not browser.openExternalLinks()
    assert browser.source().isEmpty()


def test_sg_links_written_in_memory_text_stay_text(qtbot):
    html = render_markdown("[jump](sg://event/evt_1) and <sg://block/blk_2>")
    assert "href" not in html and "sg://event/evt_1" in html
    assert 'href="sg://event/evt_51?key=' in render_markdown(f"[evt_51]({internal_link('event', 'evt_51')})")
    browser = MarkdownBrowser()
    qtbot.addWidget(browser)
    seen: list[tuple[str, str]] = []
    browser.internal_link_activated.connect(lambda kind, identifier: seen.append((kind, identifier)))
    browser.anchorClicked.emit(QUrl("sg://event/evt_1"))
    browser.anchorClicked.emit(QUrl("sg://event/evt_1?key=guessed"))
    assert seen == []


def test_hostile_markdown_is_shown_as_plain_text_not_parsed(qtbot):
    """`![` repeated 100k times took 10 s to render on the UI thread; it is now escaped plain text."""
    hostile = "![" * 100_000
    html = render_markdown(hostile)
    assert html.startswith("<p><i>Shown as plain text: 200,000 characters (200,000 of them markup)")
    assert "<img" not in html and html.count("![") == 100_000
    huge = "<b>x</b> " * 300_000
    html = render_markdown(huge)
    assert "Only the first 200,000 are shown." in html and "<b>" not in html
    browser = MarkdownBrowser()
    qtbot.addWidget(browser)
    browser.set_markdown_text(hostile)
    assert "Shown as plain text" in browser.toPlainText()
    assert "**bold**" not in render_markdown("**bold** " * 100)  # ordinary text still renders as markdown
