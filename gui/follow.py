"""Live follow: writes by another process (an agent, `stratagate mcp`, the reference) appear in the open window.

`LiveFollow` polls the namespace's stored revision on the database worker (one row, by key: SQLite and
PostgreSQL alike). When it moved past what the open memory last read, it takes a census of ids, describes the
change against the previous census (`stratagate.follow`), adds it to the feed, and hands it to the window's
one write path (`Writes.external_change`), which re-reads the memory and publishes `Changes(reloaded=True)`
to every view: this module never refreshes a view itself. The window's own writes move the memory's revision
with the stored one, so they are never reported as external.

A read-only SQLite open reads the file at rest or a private copy, which never sees new writes: for it the
follower watches the file instead, and once it changed opens it afresh (`reopen`, a read-only open again:
a fresh private copy), then describes what the fresh open brought.

`ChangeFeed` is the dock that lists what came in: one entry per detected change ("since revision R: 3 turns,
1 block sealed, …"), each item a link to its view, bold until seen; its Follow button pauses and resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stratagate.follow import (
    Census,
    ChangeSummary,
    FeedItem,
    describe_changes,
    file_identity,
    snapshot_file,
    stored_revision,
    take_census,
)
from stratagate_gui.workers import DatabaseWorker

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.context import AppContext

POLL_MS = 250
REOPEN_RETRY_S = 5.0
"""A reopen that did not happen (the open failed, the window showed why) is tried again after this long."""
# Which view an item opens: the kind a feed item has → the kind `window.jump_to` takes.
JUMP_KINDS = {"blocks": "block", "events": "event", "superseded": "event", "forgotten": "event",
              "archived": "event", "elements": "element", "facts": "element"}


class LiveFollow(QObject):
    """Polls the open memory's stored revision and reports writes by other processes."""

    detected = Signal(object)
    """A `ChangeSummary` of writes another process made (before the window re-read them)."""
    following_changed = Signal(bool)

    def __init__(self, worker: DatabaseWorker, announce: Callable[[str], Any],
                 reopen: Callable[[], Any] | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.worker = worker
        self.announce = announce
        self.reopen = reopen
        """Opens the memory afresh (a read-only SQLite open reads a snapshot and cannot see new writes)."""
        self.memory: StrataGate | None = None
        self.census: Census | None = None
        self._identity: str | None = None
        """For a snapshot open: the file's identity when it was opened; None when the revision is polled."""
        self._changed_identity: str | None = None
        self._carried: tuple[str, str, Census] | None = None
        """(location, namespace, census) before a reopen, to describe what the fresh open brought."""
        self._reopened_at = 0.0
        self.following = True
        self.detected_at: float | None = None
        """`time.monotonic()` of the last detection (for the latency benchmark)."""
        self._probing = False
        # Single shot, restarted when a probe is over: the worker is idle for POLL_MS between two probes
        # however slow a probe is, so following never keeps the database worker busy.
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def set_memory(self, memory: StrataGate | None) -> None:
        """Follow `memory` (None: stop). Takes the first census on the worker."""
        self.memory, self.census = memory, None
        if memory is None:
            self._timer.stop()
            return
        carried = self._carried
        since = carried[2] if carried is not None and carried[:2] == (memory.backend.location, memory.namespace) else None
        # In the background lane: the views' first rows are read before it.
        self.worker.run(lambda: self._start(memory, since),
                        on_done=lambda started: self._first_census(memory, *started),
                        description="take a census", background=True)

    @staticmethod
    def _start(memory: StrataGate, since: Census | None) -> tuple[Census, str | None]:
        """On the worker: the first census (`since` the one before a reopen, to say what it brought), and the
        file's identity when the open reads a snapshot."""
        path = snapshot_file(memory.backend)
        census = take_census(memory.backend, memory.namespace, since)
        return census, file_identity(path) if path is not None else None

    def _first_census(self, memory: StrataGate, census: Census, identity: str | None) -> None:
        if memory is not self.memory:
            return
        self.census, self._identity, self._changed_identity = census, identity, None
        carried, self._carried = self._carried, None
        if carried is not None and carried[:2] == (memory.backend.location, memory.namespace):
            summary = describe_changes(carried[2], census)  # the fresh open already shows it: only the feed
            if summary.items:
                self.detected_at = time.monotonic()
                self.detected.emit(summary)
        if self.following:
            self._timer.start()

    def set_following(self, following: bool) -> None:
        """Pause (False) or resume (True); a resume catches up on everything written meanwhile."""
        self.following = following
        if following and self.memory is not None and self.census is not None:
            self._timer.start()
            self._poll()
        else:
            self._timer.stop()
        self.following_changed.emit(following)

    def _poll(self) -> None:
        memory = self.memory
        if memory is None or self.census is None or self._probing or not self.following:
            return
        self._probing = True
        if self._identity is not None:
            path = snapshot_file(memory.backend)
            self.worker.run(lambda: file_identity(path), on_done=lambda identity: self._file_probed(memory, identity),
                            on_error=lambda _error: self._next_poll(), description="watch the file")
            return
        census = self.census
        self.worker.run(lambda: self._probe(memory, census), on_done=lambda result: self._probed(memory, result),
                        on_error=lambda _error: self._probed(memory, None), description="poll for other writers")

    def _file_probed(self, memory: StrataGate, identity: str) -> None:
        """A snapshot open is opened afresh once its file changed and then held still for one poll (a reopen
        in the middle of a burst of writes would be refused as a file changing while it is read)."""
        self._next_poll()
        if memory is not self.memory or self.census is None or identity == self._identity:
            return
        if identity != self._changed_identity or self.reopen is None:
            self._changed_identity = identity
            return
        if self._carried is not None and time.monotonic() - self._reopened_at < REOPEN_RETRY_S:
            return  # a reopen is under way (or failed a moment ago: the window said why)
        self._carried = (memory.backend.location, memory.namespace, self.census)
        self._reopened_at = time.monotonic()
        self.reopen()

    @staticmethod
    def _probe(memory: StrataGate, since: Census) -> tuple[str, Census | None]:
        """On the worker: ('external', census now) when another process wrote; ('same', None) when the stored
        revision is the one the memory last read (nothing moved, or this window wrote)."""
        stored = stored_revision(memory.backend, memory.namespace)
        if stored == memory.revision:
            return "same", None
        return "external", take_census(memory.backend, memory.namespace, since)

    def _next_poll(self) -> None:
        self._probing = False
        if self.following and self.memory is not None:
            self._timer.start()

    def _probed(self, memory: StrataGate, result: tuple[str, Census | None] | None) -> None:
        self._next_poll()
        if memory is not self.memory or result is None:
            return
        state, census = result
        if state == "same":
            if self.census is not None and memory.revision != self.census.revision:
                self._retake(memory)  # this window wrote: keep the census current, report nothing
            return
        assert census is not None and self.census is not None
        summary = describe_changes(self.census, census)
        self.census = census
        self.detected_at = time.monotonic()
        self.detected.emit(summary)
        self.announce(summary.text())

    def _retake(self, memory: StrataGate) -> None:
        self._probing = True
        self._timer.stop()

        def done(census: Census) -> None:
            self._next_poll()
            if memory is self.memory:
                self.census = census

        since = self.census
        self.worker.run(lambda: take_census(memory.backend, memory.namespace, since), on_done=done,
                        on_error=lambda _error: self._next_poll(), description="take a census")


def _feed_item(text: str) -> QTreeWidgetItem:
    """A feed line; its whole text is also its tooltip, for a dock narrower than the line."""
    item = QTreeWidgetItem([text])
    item.setToolTip(0, text)
    return item


class ChangeFeed(QDockWidget):
    """The dock listing what other processes wrote; items jump to their views."""

    def __init__(self, follow: LiveFollow, jump: Callable[[str, str], Any], parent: QWidget | None = None):
        super().__init__("Live changes", parent)
        self.setObjectName("liveChangesDock")
        self.follow = follow
        self.jump = jump
        self.unseen: set[int] = set()
        body = QWidget(self)
        self.follow_button = QPushButton("Following", body)
        self.follow_button.setCheckable(True)
        self.follow_button.setChecked(follow.following)
        self.follow_button.setToolTip("Pause or resume following writes by other processes")
        self.follow_button.toggled.connect(follow.set_following)
        self.seen_button = QPushButton("Mark all seen", body)
        self.seen_button.clicked.connect(self.mark_all_seen)
        self.status = QLabel(body)
        self.tree = QTreeWidget(body)
        self.tree.setHeaderHidden(True)
        self.tree.setMinimumWidth(320)  # wide enough for "since revision R: …" at the default font
        self.tree.setAccessibleName("Changes from other processes")
        self.tree.itemActivated.connect(self._open)
        self.tree.itemClicked.connect(self._open)
        bar = QHBoxLayout()
        bar.addWidget(self.follow_button)
        bar.addWidget(self.seen_button)
        bar.addWidget(self.status, 1)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.tree, 1)
        self.setWidget(body)
        follow.detected.connect(self.add)
        follow.following_changed.connect(self._show_following)
        self._show_following(follow.following)

    def add(self, summary: ChangeSummary) -> None:
        entry = _feed_item(f"{time.strftime('%H:%M:%S')}  {summary.text()}")
        for item in summary.items:
            child = _feed_item(item.text + (f": {', '.join(item.ids[:3])}" if item.ids else ""))
            child.setData(0, Qt.ItemDataRole.UserRole, item)
            entry.addChild(child)
        self.tree.insertTopLevelItem(0, entry)
        entry.setExpanded(True)
        self._mark(entry, True)
        self._show_count()

    def _mark(self, entry: QTreeWidgetItem, new: bool) -> None:
        font = QFont(entry.font(0))
        font.setBold(new)
        for item in (entry, *(entry.child(index) for index in range(entry.childCount()))):
            item.setFont(0, font)
        (self.unseen.add if new else self.unseen.discard)(id(entry))

    def _open(self, item: QTreeWidgetItem) -> None:
        entry = item.parent() or item
        self._mark(entry, False)
        self._show_count()
        feed_item: FeedItem | None = item.data(0, Qt.ItemDataRole.UserRole)
        if feed_item is not None and feed_item.ids and feed_item.kind in JUMP_KINDS:
            self.jump(JUMP_KINDS[feed_item.kind], feed_item.ids[0])

    def mark_all_seen(self) -> None:
        for index in range(self.tree.topLevelItemCount()):
            self._mark(self.tree.topLevelItem(index), False)
        self._show_count()

    def new_count(self) -> int:
        return len(self.unseen)

    def _show_count(self) -> None:
        count = self.new_count()
        self.setWindowTitle(f"Live changes ({count} new)" if count else "Live changes")

    def _show_following(self, following: bool) -> None:
        self.follow_button.setChecked(following)
        self.follow_button.setText("Following" if following else "Paused")
        self.status.setText("" if following else "writes by other processes wait until you resume")


def mount(ctx: AppContext) -> tuple[LiveFollow, ChangeFeed]:
    """Follow every memory the window opens; writes by other processes reach the views through the window's
    write path, and the Live changes dock (right side) lists them."""
    follow = LiveFollow(ctx.worker, ctx.writes.external_change, ctx.host.reload, ctx.host)
    ctx.host.memory_changed.connect(follow.set_memory)
    feed = ChangeFeed(follow, ctx.jumps.go, ctx.host)
    ctx.host.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, feed)
    return follow, feed
