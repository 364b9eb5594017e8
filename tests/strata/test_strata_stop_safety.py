"""`strata stop` signals only this data directory's daemon, whatever the pid file says (issue 16 item 1).

The reference trusted the pid file: `-1` became `kill(-1, SIGTERM)`, `0` the stopper's own process group, and
a recycled pid of anything with "strata" in its command line was killed. Each case runs inside a fresh pid
namespace (as root, `unshare --pid --fork --mount-proc`), so a regression can only kill processes of the
namespace, never the host's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare(1) to run the stop in its own pid namespace",
)

# Runs as pid 1 of the namespace: the kernel drops signals to it that it has no handler for, so it survives
# whatever a broken `stop` sends and reports what happened to the others.
SCENARIO = r"""
import json, os, subprocess, sys, time
from pathlib import Path

base = Path(sys.argv[1])
strata = [sys.executable, "-m", "stratagate.cli.main", "strata", "--data-dir", str(base)]
subprocess.run(strata + ["init"], check=True, capture_output=True)
pid_file = base / "strata.pid"
(base / "strata.log").touch()
report = {}

def run(*args):
    done = subprocess.run(strata + list(args), capture_output=True, text=True, timeout=120)
    return {"code": done.returncode, "out": done.stdout + done.stderr}

def wait_for(condition):
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)

for text in ["-1", "0", "bystander", "garbage"]:
    bystander = subprocess.Popen(["tail", "-f", str(base / "strata.log")])
    pid_file.write_text(str(bystander.pid) if text == "bystander" else text)
    status = run("status")
    stop = run("stop", "--timeout", "1")
    time.sleep(0.3)
    report[text] = {"status": status, "stop": stop, "bystander_alive": bystander.poll() is None}
    bystander.kill()
    bystander.wait()
    pid_file.unlink(missing_ok=True)

bystander = subprocess.Popen(["tail", "-f", str(base / "strata.log")])
daemon = subprocess.Popen(strata + ["serve", "--interval", "3600"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
wait_for(lambda: "Starting maintenance" in (base / "strata.log").read_text())
pid_file.write_text("-1")  # tampered while the daemon runs: the lock still names the daemon
status = run("status")
stop = run("stop", "--timeout", "30")
report["daemon"] = {
    "pid": daemon.pid,
    "status": status,
    "stop": stop,
    "daemon_exit": daemon.wait(timeout=60),
    "bystander_alive": bystander.poll() is None,
    "pid_file_left": pid_file.exists(),
}
bystander.kill()
print(json.dumps(report))
"""


def run_in_pid_namespace(tmp_path: Path) -> dict:
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, str(script), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=600,
        # Its own session: process groups are not namespaced, and `kill(0)` must not reach pytest's group.
        start_new_session=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_stop_never_signals_a_process_the_pid_file_names_without_the_daemon_lock(tmp_path: Path):
    report = run_in_pid_namespace(tmp_path)
    for text in ["-1", "0", "bystander", "garbage"]:
        case = report[text]
        assert case["bystander_alive"], (text, case)
        # The stopper itself survived (with `0` it used to SIGTERM its own process group).
        assert case["stop"]["code"] == 0, (text, case)
        assert "RUNNING" not in case["status"]["out"], (text, case)
        assert "stopped." not in case["stop"]["out"], (text, case)
    assert "names pid" in report["bystander"]["stop"]["out"]
    assert "not signalling it" in report["bystander"]["stop"]["out"]

    daemon = report["daemon"]
    assert f"RUNNING (pid={daemon['pid']})" in daemon["status"]["out"]
    assert f"Daemon (pid={daemon['pid']}) stopped." in daemon["stop"]["out"]
    assert daemon["daemon_exit"] == 0
    assert daemon["bystander_alive"]
    assert not daemon["pid_file_left"]
