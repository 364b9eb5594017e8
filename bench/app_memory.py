"""App first paint and memory: a new app process opening a memory with realistic blocks, and its peak RSS.

Tiers (built once into the bench cache by `block_memories.block_memory`, reused): 100,000 events in 16,700
blocks (6 events and 24 messages per block: 400,800 messages) and 1,000,000 events in 10,000 blocks. Each
tier runs in a fresh child process that starts the real main window (offscreen, 1280×800) and opens the
file read-only (the forensic open, as a reviewer opens an agent's memory).

First paint is measured from `open_location` to the window's first complete paint (`is_painted`): the thread
picker lists the threads, the timeline holds its bars and block list and the blocks it renders around its
selection, the event list's first row is built, and then `window.grab()` paints the whole window. "launch"
adds the process start (Python and Qt imports, window construction); "all reads" is the time until every
task the open queued has finished (background work such as the file's sha256 and live follow's census).
Peak RSS is the process's high-water mark (VmHWM), read after the first paint and again after dragging the
event list's scroll bar from top to bottom in 200 steps (the slowest step is the worst stall a user sees).
Goal (issue 15): first paint ≤ 1 s at 100k events and ≤ 2 s at 1M, peak RSS < 400 MB.

The machine is shared, so each tier runs `--runs` times (default 3), the tiers interleaved, and the table
shows the median run (by first paint) with the range of first paints, the process's CPU time to the paint
(all its threads) and the load average when the runs started.

    .venv/bin/python bench/app_memory.py [--quick] [--runs 3] [--tiers 100000:16700,1000000:10000]

`--measure FILE` runs one child measurement and prints its JSON (to compare builds, run it under another
checkout's sources).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, write_section

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "reference-v5-basic.snapshot.json"
NAMESPACE = "project:atlas"
BUDGET_MB = 400


LAUNCHED = time.perf_counter()
TIERS = ((100_000, 16_700), (1_000_000, 10_000))
QUICK_TIERS = ((10_000, 1_670),)
FIRST_PAINT_GOAL_S = {100_000: 1.0, 1_000_000: 2.0}


def status_mb(field: str = "VmRSS") -> float:
    """A /proc/self/status memory field in MB (VmRSS now, VmHWM the peak so far)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def build_database(path: Path, events: int) -> None:
    """The reference fixture with N copies of its events (bench/undo_stall.py builds its memory with it)."""
    from stratagate.snapshot import normalize_snapshot
    from stratagate.storage.sql import open_backend

    snapshot = normalize_snapshot(json.loads(FIXTURE.read_text())[NAMESPACE]["snapshot"])
    originals = [event for event in snapshot["events"] if not event.get("supersededBy")]
    extra = []
    for number in range(events - len(snapshot["events"])):
        event = copy.deepcopy(originals[number % len(originals)])
        event["id"] = f"evt_bench_{number}"
        event["title"] = f"{event['title']} #{number}"
        event["temporal"].pop("supersedesEventIds", None)
        extra.append(event)
    snapshot["events"] = snapshot["events"] + extra
    backend = open_backend(path)
    try:
        backend.import_namespace(NAMESPACE, snapshot)
    finally:
        backend.close()


def is_painted(window) -> bool:
    """The first paint's content is there: threads in the picker, the timeline's bars and its selected block
    rendered, and the event list's first row built (asking for it is what painting the table does)."""
    from stratagate_gui.models.lazy_table import PLACEHOLDER

    timeline, events = window.timeline, window.events.model
    return (
        window.thread_picker.count() > 1 and bool(timeline.plot.bars) and events.rowCount() > 0
        and events.index(0, 0).data() not in (None, PLACEHOLDER)
        and bool(timeline.selected_block) and timeline.selected_block in timeline.content.toPlainText()
    )


def measure(path: Path) -> dict[str, float]:
    from PySide6.QtCore import QSettings

    from stratagate_gui.application import build_main_window, create_application

    app = create_application()
    settings = QSettings(str(path.with_suffix(".ini")), QSettings.Format.IniFormat)
    window = build_main_window(settings)
    window.resize(1280, 800)
    window.show()
    app.processEvents()
    empty = status_mb()
    start, cpu_start = time.perf_counter(), time.process_time()
    window.open_location(str(path), read_only=True)
    while not is_painted(window):
        app.processEvents()
        time.sleep(0.005)
    window.grab()
    painted = time.perf_counter()
    first_paint = {"first_paint_s": painted - start, "cpu_paint_s": time.process_time() - cpu_start,
                   "launch_s": painted - LAUNCHED, "peak_paint": status_mb("VmHWM"),
                   "blocks": len(window.timeline.plot.bars), "threads": window.thread_picker.count() - 1}
    window.wait_idle(600_000)
    first_paint["idle_s"] = time.perf_counter() - start
    window.show_view(window.events)
    table, model = window.events.table, window.events.model
    while model.canFetchMore():
        model.fetchMore()
    scroll_bar = table.verticalScrollBar()
    slowest = 0.0
    for step in range(201):
        scroll_bar.setValue(scroll_bar.maximum() * step // 200)
        started = time.perf_counter()
        app.processEvents()
        slowest = max(slowest, time.perf_counter() - started)
    table.scrollToBottom()
    window.wait_idle(600_000)
    app.processEvents()
    result = {"empty": empty, **first_paint, "peak_scrolled": status_mb("VmHWM"), "rss": status_mb(),
              "rows": model.rowCount(), "slowest_step_ms": slowest * 1000}
    window.close()
    return result


def measure_in_child(path: Path) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, __file__, "--measure", str(path)], check=True, capture_output=True, text=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one tier of 10,000 events in 1,670 blocks")
    parser.add_argument("--tiers", help="EVENTS:BLOCKS,… (default 100000:16700,1000000:10000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per tier, interleaved (median shown)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.measure:
        print(json.dumps(measure(arguments.measure)))
        return
    from block_memories import block_memory

    tiers = QUICK_TIERS if arguments.quick else TIERS
    if arguments.tiers:
        tiers = tuple(tuple(int(n) for n in tier.split(":")) for tier in arguments.tiers.split(","))
    load = os.getloadavg()
    results: dict[tuple[int, int], list[dict[str, float]]] = {tier: [] for tier in tiers}
    for _run in range(arguments.runs):
        for events, blocks in tiers:
            results[(events, blocks)].append(measure_in_child(block_memory(events, blocks)))
    rows = []
    for (events, _blocks), runs in results.items():
        runs.sort(key=lambda run: run["first_paint_s"])
        result = runs[len(runs) // 2]
        goal = FIRST_PAINT_GOAL_S.get(events)
        met = result["first_paint_s"] <= goal and result["peak_scrolled"] < BUDGET_MB if goal else None
        rows.append((
            f"{events:,} events, {result['blocks']:,} blocks, {result['threads']} threads",
            f"{result['first_paint_s']:.2f} ({runs[0]['first_paint_s']:.2f}–{runs[-1]['first_paint_s']:.2f})",
            f"{result['cpu_paint_s']:.2f}", f"{result['launch_s']:.2f}", f"{result['idle_s']:.2f}",
            f"{result['empty']:.0f}",
            f"{result['peak_paint']:.0f}", f"{result['slowest_step_ms']:.0f}", f"{result['peak_scrolled']:.0f}",
            "—" if met is None else f"{'yes' if met else 'NO'} (≤ {goal:g} s, < {BUDGET_MB} MB)",
        ))
    table = markdown_table(
        ("memory (read-only open)", "first paint (s), median (range)", "CPU to paint (s)", "launch to paint (s)",
         "all reads (s)", "empty window RSS (MB)",
         "peak RSS at paint (MB)", "slowest scroll step (ms)", "peak RSS scrolled to the end (MB)", "goal met"),
        rows,
    )
    print(table)
    write_section(
        "app-memory",
        "## App first paint and memory (bench/app_memory.py)\n\nA new app process opens the memory read-only; "
        "first paint is `open_location` to the window painted with the thread picker filled, the timeline's "
        "bars and selected block rendered and the event list's first row built (then `window.grab()`); \"all "
        "reads\" is until every task the open queued has finished; peak RSS is VmHWM. "
        "Blocks hold 24 raw messages each; see the module docstring. "
        f"Median of {arguments.runs} runs per tier, interleaved; load average "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) when they started "
        "(2 cores, shared).\n\n" + table,
    )


if __name__ == "__main__":
    main()
