"""The Strata tier browser, headless: tiers, preview, search, and moves through the dry-run preview."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QTableView

from stratagate.strata import StrataConfig, StrataStore, Tier, janitor
from stratagate.strata.errors import StoreNotFoundError
from stratagate_gui.strata import StrataBrowser
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import Writes

DAY = 86400


@pytest.fixture
def store(tmp_path: Path) -> StrataStore:
    created = StrataStore(tmp_path / "strata_data", StrataConfig())
    created.init()
    created.write("projects/plan.md", "# Plan\n\nShip **v2** <script>alert(1)</script>\n")
    cooled = created.cooled_root / "entities/ada.md"
    cooled.parent.mkdir(parents=True)
    cooled.write_text("# Ada\n\nMathematician and zebra keeper\n")
    stamp = time.time() - 40 * DAY
    os.utime(cooled, (stamp, stamp))
    sidecar = created.sidecar()
    sidecar.record_access("entities/ada.md", time.time())
    sidecar.record_access("entities/ada.md", time.time())
    sidecar.save()
    (created.cooled_root / "old.md").write_text("old notes about zebra stripes\n")
    janitor.apply_evict(created, janitor.plan_evict(created, ["old.md"]))
    return created


@pytest.fixture
def writes(qtbot):
    worker = DatabaseWorker()
    yield Writes(worker)
    worker.shutdown()


@pytest.fixture
def browser(qtbot, store: StrataStore, writes: Writes) -> StrataBrowser:
    widget = StrataBrowser(store.base_dir, writes)
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    return widget


def apply_and_wait(qtbot, browser: StrataBrowser) -> None:
    """Moves run on the write path's file lane: wait until the write and its refresh are done."""
    browser.preview_dialog.apply_button.click()
    qtbot.waitUntil(lambda: browser.writes.file_worker.pending == 0)


def cells(view: QTableView) -> list[list[str]]:
    model = view.model()
    return [
        [model.index(row, column).data() for column in range(model.columnCount())]
        for row in range(model.rowCount())
    ]


def select(browser: StrataBrowser, tab: str, *rows: int) -> None:
    view = browser.views[tab]
    browser.tabs.setCurrentWidget(view)
    view.clearSelection()
    for row in rows:
        view.selectionModel().select(
            view.model().index(row, 0),
            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
        )


def test_each_tier_lists_its_files_with_age_and_access_counts(browser: StrataBrowser, store: StrataStore):
    active_size = (store.active_root / "projects/plan.md").stat().st_size
    cooled_size = (store.cooled_root / "entities/ada.md").stat().st_size
    assert cells(browser.views["active"]) == [["projects/plan.md", "today", "—", f"{active_size} B"]]
    assert cells(browser.views["cooled"]) == [["entities/ada.md", "40 d", "2", f"{cooled_size} B"]]
    assert [row[0] for row in cells(browser.views["archive"])] == ["old.md"]
    assert browser.tabs.tabText(1) == "Cooled (1)"


def test_preview_renders_markdown_without_html_and_without_side_effects(
    browser: StrataBrowser, store: StrataStore
):
    select(browser, "cooled", 0)
    assert "Mathematician" in browser.preview.toPlainText()
    assert store.sidecar().get("entities/ada.md").access_count == 2
    select(browser, "active", 0)
    html = browser.preview.toHtml()
    assert "<script>" not in html and "font-weight:700" in html
    select(browser, "archive", 0)
    assert "zebra stripes" in browser.preview.toPlainText()
    assert store.counts()["archived"] == 1


def test_search_lists_hits_from_every_tier_without_counting_access(
    browser: StrataBrowser, store: StrataStore
):
    browser.search_field.setText("zebra")
    browser.run_search()
    assert browser.tabs.currentWidget() is browser.views["search"]
    assert [(row[0], row[1]) for row in cells(browser.views["search"])] == [
        ("cooled", "entities/ada.md"),
        ("archive", "old.md"),
    ]
    assert store.sidecar().get("entities/ada.md").access_count == 2


def test_promote_shows_a_dry_run_preview_and_moves_only_when_applied(
    browser: StrataBrowser, store: StrataStore, qtbot
):
    select(browser, "cooled", 0)
    assert browser.promote_button.isEnabled() and not browser.rehydrate_button.isEnabled()
    browser.promote_button.click()
    dialog = browser.preview_dialog
    assert dialog.table.item(0, 0).text() == "entities/ada.md" and dialog.table.item(0, 1).text() == "promote"
    dialog.reject()
    assert (store.cooled_root / "entities/ada.md").exists()

    browser.promote_button.click()
    apply_and_wait(qtbot, browser)
    assert (store.active_root / "entities/ada.md").exists()
    assert not (store.cooled_root / "entities/ada.md").exists()
    assert [row[0] for row in cells(browser.views["active"])] == ["entities/ada.md", "projects/plan.md"]
    assert cells(browser.views["cooled"]) == []


def test_evict_then_rehydrate_round_trip_through_the_browser(qtbot, browser: StrataBrowser, store: StrataStore):
    select(browser, "cooled", 0)
    browser.evict_button.click()
    apply_and_wait(qtbot, browser)
    assert sorted(row[0] for row in cells(browser.views["archive"])) == ["entities/ada.md", "old.md"]
    select(browser, "archive", [row[0] for row in cells(browser.views["archive"])].index("entities/ada.md"))
    browser.rehydrate_button.click()
    apply_and_wait(qtbot, browser)
    assert (store.active_root / "entities/ada.md").read_text() == "# Ada\n\nMathematician and zebra keeper\n"
    assert [row[0] for row in cells(browser.views["archive"])] == ["old.md"]


def test_conflict_is_shown_in_the_preview_and_apply_is_disabled(browser: StrataBrowser, store: StrataStore):
    store.write("entities/ada.md", "a newer active file")
    select(browser, "cooled", 0)
    browser.promote_button.click()
    dialog = browser.preview_dialog
    assert dialog.table.item(0, 1).text() == "conflict"
    assert "already exists" in dialog.table.item(0, 2).text()
    assert not dialog.apply_button.isEnabled()
    assert (store.active_root / "entities/ada.md").read_text() == "a newer active file"


def test_corrupt_sidecar_is_an_error_dialog_naming_the_file(browser: StrataBrowser, store: StrataStore):
    store.sidecar_file.write_text("{broken")
    browser.refresh()
    error_box = browser.writes.error_box
    assert error_box is not None and error_box.isVisible()
    assert "stratum_2_access.json" in error_box.text()
    assert "repair-sidecar" in error_box.text()
    assert (store.cooled_root / "entities/ada.md").exists()


def test_non_utf8_file_preview_explains_instead_of_failing(browser: StrataBrowser, store: StrataStore):
    (store.cooled_root / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    browser.refresh()
    select(browser, "cooled", [row[0] for row in cells(browser.views["cooled"])].index("latin1.md"))
    assert "latin1.md: not UTF-8 text" in browser.preview.toPlainText()


def test_a_directory_that_is_not_a_store_is_refused(tmp_path: Path, qtbot, writes: Writes):
    with pytest.raises(StoreNotFoundError, match="no Strata store"):
        StrataBrowser(tmp_path, writes)


def test_large_tiers_are_paged_in_through_fetch_more(qtbot, tmp_path: Path, writes: Writes):
    store = StrataStore(tmp_path / "big", StrataConfig())
    store.init()
    for number in range(1200):
        (store.active_root / f"n{number:04d}.md").write_text("x")
    widget = StrataBrowser(store.base_dir, writes)
    qtbot.addWidget(widget)
    model = widget.models[Tier.ACTIVE]
    assert model.total == 1200 and model.rowCount() == 500
    while model.canFetchMore():
        model.fetchMore()
    assert model.rowCount() == 1200


def test_strata_menu_opens_a_store_in_a_main_window_tab(make_window, store: StrataStore, tmp_path: Path):
    from stratagate_gui.strata.mount import MENU_TITLE, OPEN_ACTION_TEXT, open_data_directory

    window = make_window()
    [strata_menu] = [action.menu() for action in window.menuBar().actions() if action.text() == MENU_TITLE]
    assert [action.text() for action in strata_menu.actions()] == [OPEN_ACTION_TEXT]
    browser = open_data_directory(window.context, store.base_dir)
    assert isinstance(browser, StrataBrowser)
    assert window.tabs.currentWidget() is browser
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Strata — strata_data"

    box = open_data_directory(window.context, tmp_path / "not-a-store")
    assert box.isVisible() and "no Strata store here" in box.text()


def test_a_header_click_sorts_a_tier_by_the_value_not_the_shown_text(browser: StrataBrowser, store: StrataStore):
    for name, size in (("b.md", 900), ("a.md", 10_000)):
        (store.cooled_root / name).write_text("x" * size)
    browser.refresh()
    view = browser.views["cooled"]
    view.sortByColumn(3, Qt.SortOrder.AscendingOrder)  # Size: "10,000 B" after "900 B"
    assert [row[0] for row in cells(view)] == ["entities/ada.md", "b.md", "a.md"]
    view.sortByColumn(1, Qt.SortOrder.DescendingOrder)  # Age: the oldest first
    assert cells(view)[0][0] == "entities/ada.md"
    browser.refresh()  # a refresh keeps the header's order
    assert cells(view)[0][0] == "entities/ada.md"


def test_the_plan_dialog_sorts_by_any_column_on_a_header_click(browser: StrataBrowser, store: StrataStore, qtbot):
    from tests.gui.test_tables import _click_header

    for name in ("zeta.md", "beta.md"):
        (store.cooled_root / name).write_text(f"# {name}\n")
    store.write("beta.md", "an active copy: promoting the cooled one conflicts")
    browser.refresh()
    select(browser, "cooled", *range(len(cells(browser.views["cooled"]))))
    browser.promote_button.click()
    dialog = browser.preview_dialog
    dialog.show()
    qtbot.waitExposed(dialog)
    table = dialog.table

    def column(number: int) -> list[str]:
        return [table.item(row, number).text() for row in range(table.rowCount())]

    assert table.isSortingEnabled() and table.rowCount() == 3
    _click_header(qtbot, table, 0)
    assert column(0) == ["beta.md", "entities/ada.md", "zeta.md"]
    _click_header(qtbot, table, 1)
    assert column(1) == ["conflict", "promote", "promote"]
    _click_header(qtbot, table, 1)
    assert column(1) == ["promote", "promote", "conflict"]
    assert dialog.apply_button.isEnabled()  # the plan itself is untouched by the table's order
