"""Run the reference Strata's CLI-level tests against `stratagate strata` through a `strata` shim.

Usage: python bench/strata_reference_suite.py /path/to/strata-memory-checkout [--json OUT] [-k EXPR]

The reference's tests (its test_cli, test_integration and test_tracking: 50 tests) import `strata.cli.main`
and a little of its Python API. This script builds, in a temporary folder and never in this repository:

* `bin/strata`, a shell shim running `stratagate strata "$@"`;
* a stand-in `strata` package whose `strata.cli.main(argv)` runs the shim as a subprocess (forwarding the
  test's cwd, environment and standard input, printing its output where the test captures it, raising
  `SystemExit` with its exit code), and whose `Strata`, `StrataConfig` and `CostTracker` reach the same
  data through the shim's commands (`add`, `read`, `--json list`, `--json query`, `--json cost`, ...) and
  the tools through `stratagate strata mcp`, with the official MCP client.

Then it runs pytest on the reference's three files (in their checkout, which is only read) with the stand-in
package first on the path and reports the passes per file and every failure. The reference's own package is
never imported. Not collected by pytest (bench/ is not a test folder).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SUITE = ("test_cli.py", "test_integration.py", "test_tracking.py")

CLI_MODULE = '''
"""`strata.cli.main(argv)`: the reference's entry point, answered by the `strata` shim in a subprocess."""
import io
import os
import subprocess
import sys

SHIM = {shim!r}


def _standard_input():
    try:
        return sys.stdin.read()
    except (OSError, ValueError, AttributeError):  # pytest's captured stdin refuses reads
        return None


def run_shim(argv, env=None, stdin=None):
    process = subprocess.Popen(
        [SHIM, *argv],
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={{**os.environ, **(env or {{}})}},
        text=True,
    )
    out, err = process.communicate(stdin)
    return process.returncode, out, err


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    code, out, err = run_shim(argv, stdin=_standard_input())
    sys.stdout.write(out)
    sys.stderr.write(err)
    if code:
        raise SystemExit(code)
'''

CONFIG_MODULE = '''
"""`StrataConfig`: the reference's settings object; the shim receives them through `strata.json`.

The reference's object replaces a whole dict setting (`decay_thresholds={{"*": 0}}` makes every path 0
days); stratagate merges a file's dict onto its defaults, so every default key is written with the `*` value.
"""
import json
from pathlib import Path


class StrataConfig:
    def __init__(self, base_dir="./strata_data", **settings):
        self.base_dir = Path(base_dir)
        self.settings = settings

    def write(self):
        from strata.cli import run_shim

        self.base_dir.mkdir(parents=True, exist_ok=True)
        code, out, err = run_shim(["--json", "config"], env={{"STRATA_HOME": str(self.base_dir.absolute())}})
        effective = json.loads(out)["data"]
        settings = {{}}
        for key, value in self.settings.items():
            if isinstance(value, dict) and "*" in value and isinstance(effective.get(key), dict):
                value = {{**{{name: value["*"] for name in effective[key]}}, **value}}
            settings[key] = value
        file = self.base_dir / "strata.json"
        existing = json.loads(file.read_text()) if file.exists() else {{}}
        file.write_text(json.dumps({{**existing, **settings}}))
'''

TRACKING_MODULE = '''
"""`CostTracker`: `strata cost` through the shim."""
import json

from strata.cli import run_shim


class CostTracker:
    def __init__(self, config):
        self.config = config

    def get_summary(self):
        code, out, err = run_shim(["--json", "cost"], env={{"STRATA_HOME": str(self.config.base_dir)}})
        return json.loads(out)["data"]
'''

PACKAGE_INIT = '''
"""The reference's `Strata` facade, answered through the `strata` shim and `stratagate strata mcp`."""
import asyncio
import json
import os

from strata.cli import SHIM, run_shim
from strata.config import StrataConfig

__all__ = ["Strata", "StrataConfig"]


class _ShimError(RuntimeError):
    pass


class _Tools:
    def __init__(self, home):
        self.home = home

    async def _session(self, work):
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        server = StdioServerParameters(command=SHIM, args=["mcp"], env={{**os.environ, "STRATA_HOME": self.home}})
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)

    def execute(self, name, arguments):
        async def call(session):
            result = await session.call_tool(name, arguments)
            text = result.content[0].text if result.content else ""
            if result.is_error:
                return {{"error": text}}
            return json.loads(text)

        return asyncio.run(self._session(call))

    def schemas(self):
        async def listing(session):
            return (await session.list_tools()).tools

        return [
            {{"type": "function", "function": {{"name": tool.name, "description": tool.description,
                                               "parameters": tool.input_schema}}}}
            for tool in asyncio.run(self._session(listing))
        ]


class _Cooled:
    def __init__(self, strata):
        self.strata = strata

    def list_all(self):
        return self.strata._json("list-stratum-2")


class Strata:
    def __init__(self, config=None):
        self.config = config or StrataConfig()
        self.config.write()
        self.home = str(self.config.base_dir.absolute())
        run_shim(["init", "--non-interactive"], env={{"STRATA_HOME": self.home}})
        self.config.write()
        self.tools = _Tools(self.home)
        self.s2 = _Cooled(self)

    def _run(self, *argv, stdin=None):
        code, out, err = run_shim(list(argv), env={{"STRATA_HOME": self.home}}, stdin=stdin)
        if code:
            raise _ShimError(out + err)
        return out

    def _json(self, *argv):
        return json.loads(self._run("--json", *argv))["data"]

    def write_active(self, path, content):
        return self._run("add", path, stdin=content)

    def read_active(self, path):
        return self._json("read", path)["content"]

    def list_active(self, path=""):
        return self._json("list", *([path] if path else []))

    def query(self, text, top_k=5):
        return self._json("query", text, "--top-k", str(top_k))

    def migrate(self, dry_run=False):
        return self._json("migrate", *(["--dry-run"] if dry_run else []))["files"]

    def evict(self, dry_run=False):
        return self._json("evict", *(["--dry-run"] if dry_run else []))["memories"]

    def query_tool_schema(self):
        return next(schema for schema in self.tools.schemas() if schema["function"]["name"] == "strata_query")

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
'''

# conftest.py of the reference imports these at module level; the CLI-level tests never use them.
PLACEHOLDER_MODULE = '''
"""Placeholder: the reference's storage classes are not part of the command line."""


class _NotInThisBuild:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("only the command line is run through the shim")


{names}
'''


def build_stand_in(root: Path, stratagate: Path) -> Path:
    bin_dir, package = root / "bin", root / "package" / "strata"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "strata"
    shim.write_text(f'#!/bin/sh\nexec {stratagate} strata "$@"\n')
    shim.chmod(0o755)
    package.mkdir(parents=True)
    modules = {
        "__init__.py": PACKAGE_INIT,
        "cli/__init__.py": CLI_MODULE,
        "config.py": CONFIG_MODULE,
        "tracking.py": TRACKING_MODULE,
        "storage.py": PLACEHOLDER_MODULE.format(
            names="\n".join(
                f"{name} = _NotInThisBuild"
                for name in ("Stratum1Storage", "Stratum2Storage", "Stratum3Storage")
            )
        ),
        "janitor.py": PLACEHOLDER_MODULE.format(names="Janitor = _NotInThisBuild"),
        "query.py": PLACEHOLDER_MODULE.format(names="QueryEngine = _NotInThisBuild"),
    }
    for name, source in modules.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(textwrap.dedent(source.format(shim=str(shim))))
    return root / "package"


def run_suite(reference: Path, stratagate: Path, keyword: str | None) -> dict:
    tests = reference / "tests"
    missing = [name for name in SUITE if not (tests / name).is_file()]
    if missing:
        raise SystemExit(f"{tests}: not a reference Strata checkout (missing {', '.join(missing)})")
    outcomes: dict[str, str] = {}
    failures: dict[str, str] = {}
    tail = ""
    with tempfile.TemporaryDirectory(prefix="strata-reference-suite-") as scratch:
        root = Path(scratch)
        package_root = build_stand_in(root, stratagate)
        (root / "pytest.ini").write_text("[pytest]\n")
        env = {**os.environ, "PYTHONPATH": str(package_root), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("STRATA_HOME", None)
        # One run per file: outside its rootdir, pytest's node ids lose the file name.
        for name in SUITE:
            command = [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-c",
                str(root / "pytest.ini"),
                "--rootdir",
                str(root),
                "--import-mode=importlib",
                "-rA",
                "-q",
                *(["-k", keyword] if keyword else []),
                str(tests / name),
            ]
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
            found_any = False
            for line in done.stdout.splitlines():
                found = re.match(r"^(PASSED|FAILED|ERROR) ::(\S+)(?: - (.*))?$", line)
                if found:
                    found_any = True
                    test = f"{name}::{found.group(2)}"
                    outcomes[test] = found.group(1)
                    if found.group(1) != "PASSED":
                        failures[test] = found.group(3) or ""
            if not found_any and done.returncode not in (0, 5):
                tail += done.stdout[-2000:] + done.stderr[-2000:]
    return {
        "passed": sum(outcome == "PASSED" for outcome in outcomes.values()),
        "total": len(outcomes),
        "per_file": {
            name: [
                sum(outcome == "PASSED" for test, outcome in outcomes.items() if test.startswith(name)),
                sum(test.startswith(name) for test in outcomes),
            ]
            for name in SUITE
        },
        "outcomes": outcomes,
        "failures": failures,
        "pytest_output_tail": tail,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path, help="a checkout of the reference Strata (strata-memory)")
    parser.add_argument("--stratagate", type=Path, default=Path(sys.executable).with_name("stratagate"))
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression (a subset)")
    arguments = parser.parse_args()
    if not shutil.which(str(arguments.stratagate)):
        raise SystemExit(f"{arguments.stratagate}: no stratagate executable")
    report = run_suite(arguments.reference.resolve(), arguments.stratagate.resolve(), arguments.keyword)
    print(f"reference CLI-level tests through the shim: {report['passed']} of {report['total']} pass")
    for name, (passed, total) in report["per_file"].items():
        print(f"  {name:<22} {passed:>3} / {total}")
    for test, reason in sorted(report["failures"].items()):
        print(f"  FAIL {test}: {reason[:160]}")
    if report["pytest_output_tail"]:
        print(report["pytest_output_tail"])
    if arguments.json:
        arguments.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
