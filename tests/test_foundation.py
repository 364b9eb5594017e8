"""The skeleton: both console scripts start, and the engine stays free of Qt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import stratagate
from stratagate.cli.main import cli


def test_cli_reports_its_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"stratagate, version {stratagate.__version__}"


def test_engine_import_pulls_in_no_qt():
    code = (
        "import sys, stratagate, stratagate.cli.main\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'PySide6', 'shiboken6', 'pyqtgraph', 'stratagate_gui'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_inspector_self_test_writes_a_screenshot(tmp_path: Path):
    shot = tmp_path / "shot.png"
    completed = subprocess.run(
        [sys.executable, "-m", "stratagate_gui.app", "--self-test", str(shot)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_searching_an_sqlite_file_does_not_import_the_postgresql_dialect(tmp_path: Path):
    # The dialect pulls in asyncio and every driver's module: about 0.14 s of CPU in each one-shot process.
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "agent", block_turn_size=1) as memory:
        memory.append_turn("where is the lighthouse", "on the northern cape")
    code = (
        "import sys, stratagate\n"
        f"memory = stratagate.open({str(path)!r}, 'agent', read_only=True)\n"
        "memory.search_events('lighthouse')\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('sqlalchemy.dialects.postgresql'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
