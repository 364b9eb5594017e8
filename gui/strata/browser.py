"""`StrataBrowser`: the three tiers of a Strata data directory side by side with a markdown preview.

Reading never changes the store (no access counted, nothing promoted: the browser is for looking). Every move
— promote, evict, rehydrate — first shows the janitor's dry-run plan in a preview dialog and runs only when
the user applies it, as a write of the app's one write path on its file lane (progress with Cancel, the
shared failure policy, `Changes(files=True)` for every browser). Errors (bad paths, damaged sidecar or shadow
index, unreadable files) appear in the write path's dialog naming the file; the store is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from stratagate.errors import StrataGateError
from stratagate.strata import StrataStore, Tier, janitor
from stratagate.strata.archive import read_blob
from stratagate.strata.janitor import FileResult
from stratagate.strata.search import search
from stratagate_gui.changes import Changes, Origin
from stratagate_gui.strata.dialogs import PlanPreviewDialog, pending_count
from stratagate_gui.strata.models import (
    SEARCH_COLUMNS,
    TIER_COLUMNS,
    BrowserRow,
    BrowserRowsModel,
    iso_to_epoch,
)
from stratagate_gui.widgets.markdown_browser import MarkdownBrowser
from stratagate_gui.widgets.tables import enable_sorting
from stratagate_gui.writes import Lane, Progress, WriteOp, Writes

PREVIEW_LIMIT = 2 * 1024 * 1024
SEARCH_LIMIT = 100
TAB_TITLES = {Tier.ACTIVE: "Active", Tier.COOLED: "Cooled", Tier.ARCHIVE: "Archive"}
Apply = Callable[..., list[FileResult]]


class StrataBrowser(QWidget):
    store_changed = Signal()
    """Emitted after files moved between tiers."""

    def __init__(self, data_dir: Path | str, writes: Writes, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = StrataStore(Path(data_dir))
        self.store.require_exists()
        self.writes = writes
        self.preview_dialog: PlanPreviewDialog | None = None

        self.location = QLabel(str(self.store.base_dir), self)
        self.location.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.search_field = QLineEdit(self)
        self.search_field.setPlaceholderText("Search all tiers (the archive through its shadow index)…")
        self.search_field.returnPressed.connect(self.run_search)
        refresh_button = QPushButton("Refresh", self)
        refresh_button.clicked.connect(self.refresh)

        self.models = {tier: BrowserRowsModel(TIER_COLUMNS, self) for tier in Tier}
        self.search_model = BrowserRowsModel(SEARCH_COLUMNS, self)
        self.tabs = QTabWidget(self)
        self.views: dict[str, QTableView] = {}
        for tier in Tier:
            self.views[tier.value] = self._add_table(TAB_TITLES[tier], self.models[tier])
        self.views["search"] = self._add_table("Search results", self.search_model)
        self.tabs.currentChanged.connect(lambda _index: self._selection_changed())

        self.preview_title = QLabel(self)
        self.preview = MarkdownBrowser(self)
        preview_pane = QWidget(self)
        preview_layout = QVBoxLayout(preview_pane)
        preview_layout.setContentsMargins(0, 0, 0, 0)
        preview_layout.addWidget(self.preview_title)
        preview_layout.addWidget(self.preview)
        splitter = QSplitter(self)
        splitter.addWidget(self.tabs)
        splitter.addWidget(preview_pane)
        splitter.setSizes([520, 480])

        self.promote_button = QPushButton("Promote to active…", self)
        self.evict_button = QPushButton("Evict to archive…", self)
        self.rehydrate_button = QPushButton("Rehydrate to active…", self)
        self.promote_button.clicked.connect(self.promote_selected)
        self.evict_button.clicked.connect(self.evict_selected)
        self.rehydrate_button.clicked.connect(self.rehydrate_selected)

        top = QHBoxLayout()
        top.addWidget(self.location, 1)
        top.addWidget(self.search_field, 2)
        top.addWidget(refresh_button)
        actions = QHBoxLayout()
        actions.addWidget(self.promote_button)
        actions.addWidget(self.evict_button)
        actions.addWidget(self.rehydrate_button)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addLayout(actions)
        writes.changes.connect(self._on_changes)
        self.refresh()

    # Content ---------------------------------------------------------------------------------------------
    def _add_table(self, title: str, model: BrowserRowsModel) -> QTableView:
        view = QTableView(self)
        view.setModel(model)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.verticalHeader().hide()
        view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        enable_sorting(view)
        view.selectionModel().selectionChanged.connect(lambda *_args: self._selection_changed())
        self.tabs.addTab(view, title)
        return view

    def refresh(self) -> None:
        """Reload every tier from disk (the sidecar and shadow index are read, never written)."""
        try:
            rows = {tier: self._tier_rows(tier) for tier in Tier}
        except (StrataGateError, OSError) as error:
            self.writes.report("read the Strata store", error)
            return
        for tier, tier_rows in rows.items():
            self.models[tier].set_rows(tier_rows)
            self.tabs.setTabText(list(Tier).index(tier), f"{TAB_TITLES[tier]} ({len(tier_rows)})")
        self._selection_changed()

    def _tier_rows(self, tier: Tier) -> list[BrowserRow]:
        if tier is Tier.ARCHIVE:
            shadow = self.store.shadow(create=False)
            try:
                entries = shadow.all()
            finally:
                shadow.close()
            return [
                BrowserRow(tier, entry.id, entry.original_path, None, iso_to_epoch(entry.evicted_at), None)
                for entry in entries
            ]
        return [
            BrowserRow(
                tier,
                file.path,
                file.path,
                file.size,
                file.modified,
                (file.access_count or 0) if tier is Tier.COOLED else None,
            )
            for file in self.store.list_files(tier)
        ]

    def run_search(self) -> None:
        """Search without counting accesses, show the hits in the Search results tab."""
        try:
            hits = search(self.store, self.search_field.text(), top_k=SEARCH_LIMIT, record_access=False)
        except (StrataGateError, OSError) as error:
            self.writes.report("search the Strata store", error)
            return
        self.search_model.set_rows(
            [
                BrowserRow(hit.tier, hit.shadow_id or hit.path, hit.path, None, None, None, score=hit.score)
                for hit in hits
            ]
        )
        self.tabs.setCurrentWidget(self.views["search"])

    # Selection and preview -------------------------------------------------------------------------------
    def selected_rows(self) -> list[BrowserRow]:
        view = self.tabs.currentWidget()
        if not isinstance(view, QTableView):
            return []
        model = view.model()
        assert isinstance(model, BrowserRowsModel)
        return [model.row_at(index.row()) for index in view.selectionModel().selectedRows()]

    def _selection_changed(self) -> None:
        rows = self.selected_rows()
        tiers = {row.tier for row in rows}
        self.promote_button.setEnabled(Tier.COOLED in tiers)
        self.evict_button.setEnabled(Tier.COOLED in tiers)
        self.rehydrate_button.setEnabled(Tier.ARCHIVE in tiers)
        if len(rows) == 1:
            self.show_preview(rows[0])

    def show_preview(self, row: BrowserRow) -> None:
        self.preview_title.setText(f"{TAB_TITLES[row.tier]}: {row.path}")
        try:
            text = self._read(row)
        except (StrataGateError, OSError) as error:
            self.preview.setPlainText(f"Cannot preview this file.\n\n{error}")
            return
        self.preview.set_markdown_text(text)

    def _read(self, row: BrowserRow) -> str:
        if row.tier is not Tier.ARCHIVE:
            return self.store.read_text(row.tier, row.path, limit=PREVIEW_LIMIT)
        shadow = self.store.shadow(create=False)
        try:
            entry = shadow.find(row.key)
        finally:
            shadow.close()
        if entry is None:
            raise StrataGateError(f"{row.path}: no longer in the shadow index (refresh)")
        return read_blob(janitor.blob_file(self.store, entry)).content

    # Moves -------------------------------------------------------------------------------------------------
    def _keys(self, tier: Tier) -> list[str]:
        return [row.key for row in self.selected_rows() if row.tier is tier]

    def promote_selected(self) -> None:
        keys = self._keys(Tier.COOLED)
        self._preview(
            "Promote to active", lambda: janitor.plan_promote(self.store, keys), janitor.apply_promote
        )

    def evict_selected(self) -> None:
        keys = self._keys(Tier.COOLED)
        self._preview("Evict to archive", lambda: janitor.plan_evict(self.store, keys), janitor.apply_evict)

    def rehydrate_selected(self) -> None:
        keys = self._keys(Tier.ARCHIVE)
        self._preview(
            "Rehydrate to active",
            lambda: janitor.plan_rehydrate(self.store, keys, Tier.ACTIVE),
            janitor.apply_rehydrate,
        )

    def _preview(self, title: str, make_plan: Callable[[], list[FileResult]], apply: Apply) -> None:
        try:
            plan = make_plan()
        except (StrataGateError, OSError) as error:
            self.writes.report(f"plan {title.lower()}", error)
            return
        dialog = PlanPreviewDialog(title, plan, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._apply(title, plan, apply))
        self.preview_dialog = dialog
        dialog.open()

    def _apply(self, title: str, plan: list[FileResult], apply: Apply) -> None:
        store, progress = self.store, Progress(pending_count(plan))
        self.writes.run(
            WriteOp(
                label=title,
                write=lambda: apply(store, plan, progress.advance),
                changes=lambda _results: Changes.of(Origin.ACTION, title, files=True),
                on_committed=self._report_unmoved,
                progress=progress,
                lane=Lane.FILES,
                needs_writable_memory=False,
            )
        )

    def _report_unmoved(self, results: list[FileResult]) -> None:
        failures = [result for result in results if result.status in ("conflict", "error")]
        if failures:
            lines = "\n".join(f"{result.path}: {result.detail}" for result in failures)
            self.writes.show_error("Strata", f"{len(failures)} file(s) did not move:\n{lines}")

    def _on_changes(self, changes: Changes) -> None:
        if changes.files:
            self.refresh()
            self.store_changed.emit()
