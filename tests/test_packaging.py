"""The packaged desktop app: PyInstaller builds it from packaging/, and the binary runs its self-test.

The bundle is built afresh into a temporary folder on every run (about a minute), never reused.
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PyInstaller.archive.readers import CArchiveReader
from PyInstaller.depend import bindepend
from PySide6.QtGui import QImage

import stratagate

PROJECT = Path(__file__).resolve().parents[1]
SPEC = PROJECT / "packaging" / "stratagate-inspector.spec"
DESKTOP_ENTRY = PROJECT / "packaging" / "stratagate-inspector.desktop"
APP_NAME = "stratagate-inspector"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dist/stratagate-inspector/ built by PyInstaller from the spec, in a fresh temporary folder."""
    build = tmp_path_factory.mktemp("pyinstaller")
    completed = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(build / "dist"), "--workpath", str(build / "work"), str(SPEC)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return build / "dist" / APP_NAME


def run_app(binary: Path | list[str], *arguments: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run the app headless with its own empty home and cache, so nothing leaks in from this machine."""
    command = [str(binary)] if isinstance(binary, Path) else binary
    environment = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
    }
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run([*command, *arguments], capture_output=True, text=True, timeout=180, env=environment)


def distinct_colours(image: QImage) -> int:
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(rgb.constBits(), dtype=np.uint32, count=rgb.width() * rgb.height())
    return len(np.unique(pixels))


@pytest.mark.slow
def test_bundle_has_the_offscreen_and_xcb_platforms_the_font_and_the_icon(bundle: Path):
    internal = bundle / "_internal"
    assert (bundle / APP_NAME).is_file()
    assert os.access(bundle / APP_NAME, os.X_OK)
    platforms = internal / "PySide6" / "Qt" / "plugins" / "platforms"
    assert (platforms / "libqoffscreen.so").is_file()
    assert (platforms / "libqxcb.so").is_file()
    assert (internal / "stratagate_resources" / "fonts" / "DejaVuSans.ttf").is_file()
    assert (internal / "stratagate_resources" / "fonts" / "NotoSansCJKjp-Regular-Subset.otf").is_file()
    assert (internal / "stratagate_resources" / "fonts" / "LICENSE-NotoSansCJK.txt").is_file()
    assert (internal / "stratagate_resources" / "icons" / "stratagate-inspector-256.png").is_file()
    assert (internal / "docs" / "user-guide.md").is_file()
    assert (internal / "docs" / "screenshots" / "timeline.png").is_file()


def project_modules() -> set[str]:
    """Every module of the three project packages, named as imported (core/x.py is stratagate.x)."""
    package_dirs = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    modules = set()
    for package, folder in package_dirs.items():
        for source in (PROJECT / folder).rglob("*.py"):
            parts = source.relative_to(PROJECT / folder).with_suffix("").parts
            modules.add(".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return modules


@pytest.mark.slow
def test_bundle_holds_every_project_module_and_the_lazily_loaded_sql_dialects(bundle: Path):
    bundled = set(CArchiveReader(str(bundle / APP_NAME)).open_embedded_archive("PYZ.pyz").toc)
    wanted = project_modules() | {
        "sqlalchemy.dialects.sqlite.pysqlite",
        "sqlalchemy.dialects.postgresql.psycopg",
        "psycopg",
    }
    assert wanted - bundled == set()
    assert list((bundle / "_internal" / "psycopg_binary").glob("_psycopg*.so"))


@pytest.mark.slow
def test_bundle_has_the_model_adapters_prompts(bundle: Path):
    prompts = bundle / "_internal" / "stratagate" / "adapters" / "prompts"
    assert sorted(path.name for path in prompts.glob("*.md")) == ["extractor.md", "projector.md", "summarizer.md"]


@pytest.mark.slow
def test_bundle_leaves_out_web_engine_qml_tkinter_and_qt_parts_the_app_never_loads(bundle: Path):
    names = [path.name for path in bundle.rglob("*")]
    for unwanted in ("WebEngine", "Qt6Qml", "Qt6Quick", "tkinter", "_tkinter", "libtk", "Qt6Network",
                     "Qt6EglFS", "libqvnc", "libqeglfs", "libqlinuxfb", "libqtiff", "hypothesis"):
        assert not [name for name in names if unwanted in name], unwanted
    assert not [path for path in bundle.rglob("*") if path.is_symlink() and not path.exists()], "dangling links"
    qt = bundle / "_internal" / "PySide6" / "Qt"
    assert not (qt / "translations").exists()
    platforms = sorted(path.name for path in (qt / "plugins" / "platforms").iterdir())
    assert platforms == ["libqoffscreen.so", "libqwayland.so", "libqxcb.so"]


@pytest.mark.slow
def test_every_bundled_qt_plugin_finds_its_qt_libraries_in_the_bundle(bundle: Path):
    """What the exclusions left must still load: no kept plugin links a Qt library that was left out."""
    internal = bundle / "_internal"
    plugins = sorted((internal / "PySide6" / "Qt" / "plugins").rglob("*.so"))
    assert plugins
    for plugin in plugins:
        for name, found in bindepend.get_imports(str(plugin)):
            if name.startswith("libQt6"):
                assert found and Path(found).is_relative_to(internal), f"{plugin.name} needs {name}"


@pytest.mark.slow
def test_binary_self_test_screenshots_the_main_window_like_the_installed_app(bundle: Path, tmp_path: Path):
    files_before = sorted(path.relative_to(bundle) for path in bundle.rglob("*"))
    shot = tmp_path / "binary.png"
    completed = run_app(bundle / APP_NAME, "--self-test", str(shot), home=tmp_path / "home")
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr

    image = QImage(str(shot))
    assert not image.isNull(), f"{shot} is not a readable PNG"
    assert distinct_colours(image) > 16, "the screenshot is blank"

    # The same self-test from the installed package gives the main window's size to compare with.
    reference_shot = tmp_path / "installed.png"
    reference = run_app(
        [sys.executable, "-m", "stratagate_gui.app"], "--self-test", str(reference_shot), home=tmp_path / "home2"
    )
    assert reference.returncode == 0, reference.stderr
    assert image.size() == QImage(str(reference_shot)).size()

    # The bundle may be read-only once installed: the demo memory goes to the user's cache, not into it.
    assert list((tmp_path / "home" / "cache").rglob("*.sqlite")), "no demo memory in the cache"
    assert sorted(path.relative_to(bundle) for path in bundle.rglob("*")) == files_before


@pytest.mark.slow
def test_binary_without_a_display_says_what_to_do_in_one_line(bundle: Path, tmp_path: Path):
    environment = {name: value for name, value in os.environ.items()
                   if name not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    environment["HOME"] = str(tmp_path)
    completed = subprocess.run([str(bundle / APP_NAME)], capture_output=True, text=True, timeout=180,
                               env=environment)
    assert completed.returncode == 2, completed.stderr
    (line,) = completed.stderr.splitlines()
    assert "--self-test" in line and "QT_QPA_PLATFORM=offscreen" in line


@pytest.mark.slow
def test_binary_reports_its_version(bundle: Path, tmp_path: Path):
    completed = run_app(bundle / APP_NAME, "--version", home=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"{APP_NAME} {stratagate.__version__}"


@pytest.mark.slow
def test_bundle_ships_the_command_line_that_writes_and_verifies_a_memory(bundle: Path, tmp_path: Path):
    command_line = bundle / "stratagate"
    assert os.access(command_line, os.X_OK)
    version = run_app(command_line, "--version", home=tmp_path / "home")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"stratagate, version {stratagate.__version__}"

    memory = tmp_path / "demo.sqlite"
    demo = run_app(command_line, "demo", str(memory), home=tmp_path / "home")
    assert demo.returncode == 0, demo.stderr
    verify = run_app(command_line, "journal", "verify", str(memory), home=tmp_path / "home")
    assert verify.returncode == 0, verify.stderr
    assert "Traceback" not in verify.stderr

    # A user error is a one-line message and exit 2, as from the installed command.
    missing = run_app(command_line, "journal", "verify", str(tmp_path / "missing.sqlite"), home=tmp_path / "home")
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr


def project_data_files() -> set[str]:
    """Every non-Python file the three packages ship (the prompts, the demo, fonts, icons, styles), as installed."""
    package_dirs = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    files = set()
    for package, folder in package_dirs.items():
        for path in (PROJECT / folder).rglob("*"):
            if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts:
                files.add("/".join((package, *path.relative_to(PROJECT / folder).parts)))
    return files


@pytest.mark.slow
def test_wheel_holds_every_project_module_and_data_file(tmp_path: Path):
    # An editable install maps whole folders, so a package left out of pyproject's list goes unnoticed
    # until someone installs the wheel.
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(PROJECT)],
        capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    [wheel] = tmp_path.glob("stratagate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for name in names if name.endswith(".py")}
    assert project_modules() - modules == set()
    assert project_data_files() - names == set()


def test_desktop_entry_launches_the_app_with_its_icon_for_sqlite_files():
    entry = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    entry.optionxform = str  # keys are case-sensitive
    entry.read(DESKTOP_ENTRY, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application"
    assert section["Name"] == "StrataGate Inspector"
    assert section["Comment"]
    assert section["Exec"] == f"{APP_NAME} %f"
    assert set(section["Categories"].rstrip(";").split(";")) == {"Development", "Utility"}
    assert set(section["MimeType"].rstrip(";").split(";")) == {"application/vnd.sqlite3", "application/x-sqlite3"}
    icon = section["Icon"]
    assert (PROJECT / "resources" / "icons" / f"{icon}.svg").is_file()


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils is not installed")
def test_desktop_entry_passes_desktop_file_validate():
    completed = subprocess.run(["desktop-file-validate", str(DESKTOP_ENTRY)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "error:" not in completed.stdout


@pytest.fixture(scope="module")
def deb(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deb")
    completed = subprocess.run(
        ["bash", str(PROJECT / "packaging" / "build-deb.sh"), str(bundle), str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert completed.returncode == 0, completed.stderr
    return Path(completed.stdout.strip())


def dpkg(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """dpkg on a throwaway root with its own empty database, so this machine's packages stay untouched."""
    return subprocess.run(
        ["dpkg", f"--root={root}", "--force-not-root", "--force-depends", *arguments],
        capture_output=True, text=True, timeout=300,
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is not installed")
def test_deb_names_the_package_its_libraries_and_installs_the_links_desktop_entry_and_icons(deb: Path):
    assert deb.name == f"{APP_NAME}_{stratagate.__version__}_{deb.name.rsplit('_', 1)[1]}"
    info = subprocess.run(["dpkg-deb", "--field", str(deb)], capture_output=True, text=True, check=True).stdout
    assert f"Package: {APP_NAME}\n" in info and f"Version: {stratagate.__version__}\n" in info
    assert "libxcb-cursor0" in info and "libegl1" in info
    # Nothing runs as root at install time: the desktop and icon caches refresh through dpkg triggers.
    control = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(deb)], capture_output=True, check=True).stdout
    assert b"postinst" not in control and b"preinst" not in control

    listing = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True, check=True).stdout
    assert "./usr/bin/stratagate-inspector -> /opt/stratagate-inspector/stratagate-inspector" in listing
    assert "./usr/bin/stratagate -> /opt/stratagate-inspector/stratagate" in listing
    for path in ("./opt/stratagate-inspector/_internal/", "./usr/share/applications/stratagate-inspector.desktop",
                 "./usr/share/icons/hicolor/scalable/apps/stratagate-inspector.svg",
                 "./usr/share/icons/hicolor/256x256/apps/stratagate-inspector.png"):
        assert path in listing, path
    assert {line.split()[1] for line in listing.splitlines()} == {"root/root"}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dpkg") is None, reason="dpkg is not installed")
def test_installed_deb_starts_the_app_and_the_command_line_then_removes_cleanly(deb: Path, tmp_path: Path):
    root = tmp_path / "root"
    (root / "var" / "lib" / "dpkg" / "info").mkdir(parents=True)
    (root / "var" / "lib" / "dpkg" / "updates").mkdir()
    (root / "var" / "lib" / "dpkg" / "status").touch()
    installed = dpkg(root, "--install", str(deb))
    assert installed.returncode == 0, installed.stderr

    def installed_program(link: str) -> Path:
        """/usr/bin/NAME points into /opt; follow it inside the throwaway root."""
        target = os.readlink(root / "usr" / "bin" / link)
        assert target.startswith("/opt/stratagate-inspector/")
        return root / target.lstrip("/")

    shot = tmp_path / "installed.png"
    app = run_app(installed_program(APP_NAME), "--self-test", str(shot), home=tmp_path / "home")
    assert app.returncode == 0, app.stderr
    assert not QImage(str(shot)).isNull()
    memory = tmp_path / "demo.sqlite"
    demo = run_app(installed_program("stratagate"), "demo", str(memory), home=tmp_path / "home")
    assert demo.returncode == 0, demo.stderr
    verify = run_app(installed_program("stratagate"), "journal", "verify", str(memory), home=tmp_path / "home")
    assert verify.returncode == 0, verify.stderr

    removed = dpkg(root, "--remove", APP_NAME)
    assert removed.returncode == 0, removed.stderr
    assert not (root / "opt" / "stratagate-inspector").exists()
    assert not (root / "usr" / "bin" / APP_NAME).is_symlink()
