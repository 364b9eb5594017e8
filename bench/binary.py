"""The packaged binary: build time, size on disk and self-test time, next to a bare PySide6 app.

The peer is a one-window QtWidgets app built by the same PyInstaller in the same run, so the table shows
what the app adds over Qt itself. Writes the `binary` section of docs/performance.md.
    .venv/bin/python bench/binary.py
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import markdown_table, write_section

PROJECT = Path(__file__).resolve().parents[1]
SPEC = PROJECT / "packaging" / "stratagate-inspector.spec"
BARE_APP = """\
import sys
from PySide6.QtWidgets import QApplication, QLabel

app = QApplication(sys.argv)
label = QLabel("bare PySide6 app")
label.resize(1280, 800)
label.show()
app.processEvents()
sys.exit(0 if label.grab().save(sys.argv[1]) else 1)
"""
MB = 1024 * 1024


def pyinstaller(*arguments: str, workdir: Path) -> float:
    """Run PyInstaller; returns its wall time in seconds."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "ERROR",
         "--distpath", str(workdir / "dist"), "--workpath", str(workdir / "work"), *arguments],
        check=True,
        cwd=workdir,
    )
    return time.perf_counter() - start


def size_bytes(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return path.lstat().st_size
    return sum(item.lstat().st_size for item in path.rglob("*") if item.is_file() and not item.is_symlink())


def screenshot_seconds(command: list[str], out: Path) -> float:
    """Wall time from start to exit of a self-test run that saves a screenshot."""
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CACHE_HOME": str(out.parent / "cache")}
    start = time.perf_counter()
    subprocess.run([*command, str(out)], check=True, capture_output=True, env=environment, timeout=300)
    return time.perf_counter() - start


def command_seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # bench/run passes --quick to every benchmark; two builds are already the smallest run that compares.
    parser.add_argument("--quick", action="store_true", help="the same run (accepted for bench/run)")
    parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-binary-") as temporary:
        root = Path(temporary)
        app_dir, bare_dir = root / "app", root / "bare"
        app_dir.mkdir()
        bare_dir.mkdir()
        (bare_dir / "bare.py").write_text(BARE_APP)

        app_build = pyinstaller(str(SPEC), workdir=app_dir)
        bare_build = pyinstaller("--onedir", "--exclude-module", "tkinter", "bare.py", workdir=bare_dir)
        app_bundle = app_dir / "dist" / "stratagate-inspector"
        bare_bundle = bare_dir / "dist" / "bare"
        app_size, bare_size = size_bytes(app_bundle), size_bytes(bare_bundle)

        # The first run builds the demo memory into the cache; the second is what a user sees every day.
        binary = [str(app_bundle / "stratagate-inspector"), "--self-test"]
        screenshot_seconds(binary, root / "first.png")
        app_start = screenshot_seconds(binary, root / "app.png")
        cli_start = command_seconds([str(app_bundle / "stratagate"), "--version"])
        bare_start = screenshot_seconds([str(bare_bundle / "bare")], root / "bare.png")
        source_start = screenshot_seconds([sys.executable, "-m", "stratagate_gui.app", "--self-test"], root / "src.png")

        parts = sorted(((size_bytes(part), part.name) for part in (app_bundle / "_internal").iterdir()), reverse=True)

    rows = [
        ["StrataGate Inspector", f"{app_build:.0f}", f"{app_size / MB:.0f}", f"{app_start:.2f}"],
        ["bare PySide6 QtWidgets app (peer)", f"{bare_build:.0f}", f"{bare_size / MB:.0f}", f"{bare_start:.2f}"],
        ["ratio", f"{app_build / bare_build:.1f}×", f"{app_size / bare_size:.1f}×", f"{app_start / bare_start:.1f}×"],
    ]
    largest = [[name, f"{size / MB:.1f}", f"{size / app_size:.0%}"] for size, name in parts[:5]]
    write_section(
        "binary",
        "## Packaged binary\n\n"
        "`bench/binary.py`: PyInstaller onedir builds from scratch (no cache) of `packaging/stratagate-inspector.spec`"
        " and of a one-window PySide6 app, with the same PyInstaller. Start = launch to exit of `--self-test`"
        " (offscreen, demo memory already in the cache: open it, draw every view, save a screenshot);"
        " the peer only shows a label.\n\n"
        + markdown_table(["bundle", "build (s)", "size (MB)", "self-test start (s)"], rows)
        + f"\n\nThe same self-test from the source install (`python -m stratagate_gui.app`) takes {source_start:.2f} s;"
        f" the bundled command line (`stratagate --version`) starts and exits in {cli_start:.2f} s.\n\n"
        "Largest parts of `dist/stratagate-inspector/_internal/`:\n\n"
        + markdown_table(["part", "MB", "share"], largest),
    )
    print(f"app {app_build:.0f} s, {app_size / MB:.0f} MB; bare {bare_build:.0f} s, {bare_size / MB:.0f} MB")


if __name__ == "__main__":
    main()
