"""End-to-end fixtures: a real Shoal server per test, in its own state directory, driven
through the real `shoal` binary. Every test ends by checking that nothing it started is
still running."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import procfs  # noqa: E402  (tests/procfs.py: other processes and the servers' cgroups, as /proc shows them)

SHOAL = os.environ.get("SHOAL_BIN", str(Path(__file__).resolve().parents[2] / "build" / "shoal"))
REPO = Path(__file__).resolve().parents[2]


def processes_with_env(*markers: str):
    """Pids of processes whose environment holds every one of `markers` (NAME=value)."""
    found = []
    for pid in procfs.other_pids():
        env = procfs.environment(pid)
        if env is not None and all(procfs.has_marker(env, m) for m in markers):
            found.append(pid)
    return found


def cmdline(pid):
    """A process's arguments as bytes ([] once it is gone)."""
    text = procfs.read(pid, "cmdline")
    return [] if text is None else text.split(b"\0")


def processes_with_command(command: str):
    """Pids of processes whose command line is exactly `command` (arguments joined by
    spaces): what finds a process that cleared its environment (`env -i`), which
    processes_with_env cannot."""
    found = []
    for pid in procfs.other_pids():
        text = procfs.read(pid, "cmdline")
        if text is not None and b" ".join(text.rstrip(b"\0").split(b"\0")).decode(errors="replace") == command:
            found.append(pid)
    return found


def wait_for(condition, timeout=30.0, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Shoal:
    """A Shoal server in a private home, and the CLI pointed at it."""

    def __init__(self, home: Path):
        self.home = home
        self.env = dict(os.environ, SHOAL_HOME=str(home))
        self.env.pop("SHOAL_SERVER", None)
        self.server = None

    def start_server(self, *args):
        log = open(self.home / "server.out", "ab")
        self.server = subprocess.Popen([SHOAL, "server", "--home", str(self.home), "--port", "0", *args],
                                       env=self.env, stdout=log, stderr=log, start_new_session=True)
        wait_for(lambda: (self.home / "server.json").exists(), 10, what="the server to start")
        return self.server

    def get_json(self, path):
        """GET an API path of the running server, with its token."""
        url = json.loads((self.home / "server.json").read_text())["url"]
        request = urllib.request.Request(url + path, headers={"Authorization": "Bearer " + self.token()})
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.loads(reply.read())

    def token(self):
        """The server's token (<home>/token): calls that change state need it."""
        return (self.home / "token").read_text().strip()

    def stop_server(self):
        if self.server and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            self.server.wait(10)
        self.server = None

    def run(self, *args, check=None, timeout=300, input=None, env=None):
        result = subprocess.run([SHOAL, *args], env=env or self.env, capture_output=True, text=True, timeout=timeout,
                                input=input)
        if check is not None:
            assert result.returncode == check, (
                f"shoal {' '.join(args)} exited {result.returncode}, expected {check}\n"
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}\n{self.log_tails()}")
        return result

    def log_tails(self, lines=15):
        """The last lines of every log of every attempt: what a failed check shows, so that
        a failure far from this machine still says why."""
        tails = []
        for log in sorted((self.home / "jobs").glob("*/attempt-*/*.log")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            tails.append(f"--- {log.relative_to(self.home)}\n" + "\n".join(text))
        return "\n".join(tails)

    def run_job(self, spec, *flags, check=None, timeout=300):
        """`shoal run`: returns the result and the job's id."""
        result = self.run("run", str(spec), *flags, check=check, timeout=timeout)
        match = re.search(r"submitted (job-\d+)", result.stderr)
        assert match, result.stderr
        return result, match.group(1)

    def submit(self, spec: Path, *flags):
        return self.run("submit", str(spec), *flags, check=0).stdout.strip()

    def status(self, job_id):
        return json.loads(self.run("status", job_id, "--json", check=0).stdout)

    def wait_state(self, job_id, states, timeout=60):
        states = {states} if isinstance(states, str) else set(states)
        return wait_for(lambda: (s := self.status(job_id)) and s["state"] in states and s, timeout,
                        what=f"{job_id} to be {states}")

    def logs(self, job_id, role="worker", index=0, attempt=0):
        return self.run("logs", job_id, "--role", role, "--index", str(index), "--attempt", str(attempt),
                        check=0).stdout

    def job_processes(self, job_id):
        return processes_with_env(f"SHOAL_JOB_ID={job_id}", f"SHOAL_HOME={self.home}")

    def kill_agent_and_wait(self, job_id):
        """kill -9 of the job's (first) container agent; returns the job's status once it ended."""
        agent = wait_for(lambda: [p for p in self.job_processes(job_id) if cmdline(p)[1:2] == [b"container"]], 10,
                         what="the container agent")
        os.kill(agent[0], signal.SIGKILL)
        return self.wait_state(job_id, ("FAILED", "KILLED", "SUCCEEDED"), 60)


def write_spec(directory: Path, text: str, name="job.yaml") -> Path:
    path = directory / name
    path.write_text(text)
    return path


@pytest.fixture
def shoal(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    instance = Shoal(home)
    yield instance
    # Stop whatever server the test (or `shoal run`) started, then check for leaks.
    instance.run("server", "--stop", "--home", str(home))
    instance.stop_server()
    leaked = processes_with_env(f"SHOAL_HOME={home}")
    for pid in leaked:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not leaked, f"processes left running after the test: {leaked}"
    groups = procfs.server_cgroups(home)
    procfs.remove_cgroups(groups)
    assert not groups, f"cgroups left after the test: {groups}"


@pytest.fixture(scope="module")
def unix_accounts():
    """Two Unix accounts, shoal-ann and shoal-bob, made for a module's tests (needs root)
    and removed after it: {name: its pwd entry}."""
    import pwd
    names = ("shoal-ann", "shoal-bob")
    made = []
    for name in names:
        if subprocess.run(["getent", "passwd", name], capture_output=True).returncode != 0:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
            made.append(name)
    yield {name: pwd.getpwnam(name) for name in names}
    for name in made:
        subprocess.run(["userdel", name], capture_output=True)
