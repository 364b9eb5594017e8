"""The skeleton: both console scripts start, and the engine stays free of Qt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import stratagate
from stratagate.arrays import THREAD_SETTINGS
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


def _modules_after_cli(arguments: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules starting with one of `prefixes` that a `stratagate ARGUMENTS` process has imported."""
    code = (
        "import sys\n"
        "from stratagate.cli.main import cli\n"
        f"cli({arguments!r}, standalone_mode=False)\n"
        f"print('\\n' + ','.join(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in completed.stdout.splitlines()[-1].split(",") if name]


def _indexed_memory(tmp_path: Path) -> Path:
    """A file with one event about a lighthouse and its search index."""
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "agent", block_turn_size=1) as memory:
        memory.append_turn("where is the lighthouse", "on the northern cape")
        memory.add_event("the lighthouse", "on the northern cape", source_block_id=memory.list_blocks()[0].id)
        memory.search_events("lighthouse")  # builds the index into the file
    return path


def test_a_plain_cli_search_imports_only_what_it_runs(tmp_path: Path):
    # Explanations, the element index and the index's writes are loaded by the searches and commits that use
    # them: a one-shot `stratagate search` of a file that holds its index pays for its own query only.
    path = _indexed_memory(tmp_path)
    lazy = ("stratagate.search.explained", "stratagate.search.stored.writes", "stratagate.search.stored_facts.index",
            "stratagate.search.stored_facts.writes", "sqlalchemy.dialects.postgresql")
    for query in ("lighthouse", ""):
        assert _modules_after_cli(["search", str(path), query, "--namespace", "agent"], lazy) == []
    explained = _modules_after_cli(["search", str(path), "lighthouse", "--namespace", "agent", "--explain"], lazy)
    assert explained == ["stratagate.search.explained"]


def test_a_cli_search_without_words_loads_no_arrays(tmp_path: Path):
    # Queries without words are answered by SQL over the index's columns; numpy (about 0.1 s of CPU) is loaded
    # by the ranking of words alone.
    path = _indexed_memory(tmp_path)
    search = ["search", str(path)]
    for arguments in ([""], ["", "--event-type", "lighthouse", "--temporal-intent", "latest"]):
        assert _modules_after_cli([*search, *arguments, "--namespace", "agent"], ("numpy",)) == []
    assert "numpy" in _modules_after_cli([*search, "lighthouse", "--namespace", "agent"], ("numpy",))


def test_opening_a_file_in_the_cli_loads_no_search_arrays(tmp_path: Path):
    # numpy (about 0.1 s of CPU) serves the search index's queries and writes, not `open` or `export`.
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "agent", block_turn_size=1) as memory:
        memory.append_turn("where is the lighthouse", "on the northern cape")
    assert _modules_after_cli(["open", str(path), "--read-only"], ("numpy", "stratagate.search.stored.ranking")) == []


def test_the_console_script_leaves_what_is_alive_to_the_exit():
    # The collector's last pass at exit walks every module's objects and frees nothing the exit would not.
    code = ("import gc\nfrom stratagate.cli.main import main\n"
            "try:\n    main()\nfinally:\n    print(gc.get_freeze_count())\n")
    completed = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True)
    assert completed.returncode == 0
    version, frozen = completed.stdout.splitlines()
    assert version == f"stratagate, version {stratagate.__version__}"
    assert int(frozen) > 0


def test_the_cli_keeps_openblas_to_one_thread_unless_told():
    # numpy's OpenBLAS threads spin at import; the engine never calls BLAS.
    code = "import os, stratagate.cli.main\nprint(os.environ['OPENBLAS_NUM_THREADS'])\n"
    for given, expected in ((None, "1"), ("4", "4")):
        environment = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
        if given:
            environment["OPENBLAS_NUM_THREADS"] = given
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                   env=environment)
        assert completed.stdout.strip() == expected


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the process's threads in /proc")
def test_the_library_loads_numpy_with_one_openblas_thread_unless_told():
    # The index never calls BLAS; OpenBLAS's idle threads spin after it loads. A host's own setting wins, and
    # the environment its children inherit is left as it was.
    code = ("import os\nfrom stratagate.arrays import np\nnp.zeros(1)\n"
            "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))\n")
    bare = {key: value for key, value in os.environ.items() if key not in THREAD_SETTINGS}
    for given, expected in ((None, "1 None"), ("2", f"{min(2, os.cpu_count() or 1)} 2")):
        environment = bare if given is None else bare | {"OPENBLAS_NUM_THREADS": given}
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                   env=environment)
        assert completed.stdout.strip() == expected
