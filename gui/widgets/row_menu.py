"""The right-click menu of an id table: copy ids, copy rows as JSON, then the view's and its peers' actions."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QTableView

from stratagate_gui.models.lazy_table import LazyIdTableModel


@dataclass(frozen=True)
class RowAction:
    """One entry of the menu: its text, and what it does with the selected ids."""

    text: str
    run: Callable[[list[str]], object]


def rows_as_json(model: LazyIdTableModel, headers: Sequence[str], rows: Sequence[int]) -> str:
    """The selected rows as a JSON list of objects keyed by column title (a row not built yet: its id only)."""
    records = []
    for row in rows:
        values = model.shown_row(row)
        records.append({"id": model.id_at(row)} if values is None else dict(zip(headers, values, strict=True)))
    return json.dumps(records, ensure_ascii=False, indent=2)


def row_menu(
    table: QTableView, model: LazyIdTableModel, headers: Sequence[str], actions: Sequence[RowAction]
) -> QMenu:
    """The menu for the rows selected in `table` (built, not shown: `show_row_menu` shows it)."""
    rows = sorted({index.row() for index in table.selectionModel().selectedRows()})
    ids = [model.id_at(row) for row in rows]
    menu = QMenu(table)
    clipboard = QGuiApplication.clipboard()
    copy_ids = menu.addAction("Copy id" if len(ids) == 1 else f"Copy {len(ids)} ids")
    copy_ids.triggered.connect(lambda _checked=False: clipboard.setText("\n".join(ids)))
    copy_json = menu.addAction("Copy row as JSON" if len(ids) == 1 else f"Copy {len(ids)} rows as JSON")
    copy_json.triggered.connect(lambda _checked=False: clipboard.setText(rows_as_json(model, headers, rows)))
    if actions:
        menu.addSeparator()
    for action in actions:
        entry = menu.addAction(action.text)
        entry.triggered.connect(lambda _checked=False, run=action.run: run(ids))
    for entry in menu.actions():
        entry.setEnabled(bool(ids))
    return menu


def show_row_menu(table: QTableView, model: LazyIdTableModel, headers: Sequence[str],
                  actions: Callable[[], Sequence[RowAction]]) -> None:
    """Give `table` a right-click menu (the actions are asked for each time, so peers mounted later count)."""

    def popup(position: QPoint) -> None:
        menu = row_menu(table, model, headers, actions())
        menu.popup(table.viewport().mapToGlobal(position))

    table.setContextMenuPolicy(table.contextMenuPolicy().CustomContextMenu)
    table.customContextMenuRequested.connect(popup)
