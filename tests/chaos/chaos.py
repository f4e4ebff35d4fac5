#!/usr/bin/env python3
"""Shoal's chaos suite: scripted faults against real jobs on the embedded local cluster.

Each run starts a fresh server, submits a 2-worker job that checkpoints every step and
commits an output at the end (chaos_job.py), injects one fault while the job runs, and
checks what users care about:
  - the job ends in a defined state: retried and SUCCEEDED, or FAILED with a reason that
    names the cause;
  - no process of the job is left running;
  - no output is half committed (no *.tmp, every output complete when the job succeeded);
  - the history agrees (attempts final, the job's state that of its last attempt), and a
    restarted server shows the same.
It prints a table: fault, runs, recovered, failed cleanly, orphans, lost outputs; and
exits 1 if any run did neither recover nor fail cleanly, left a process or lost output.

  tests/chaos/chaos.py                 # the long version: every fault 20 times
  tests/chaos/chaos.py --runs 1        # the short version CI runs
  tests/chaos/chaos.py --faults am-kill9,sigstop-worker --runs 5
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def processes_with_env(marker):
    needle = marker.encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if env.startswith(needle) or b"\0" + needle in env:
            found.append((int(entry), cmdline, env))
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run:
    """One fault against one job, in a private home with a server on a fixed port."""

    def __init__(self, shoal, fault, workdir: Path):
        self.shoal, self.fault, self.dir = shoal, fault, workdir
        self.home = workdir / "home"
        self.data = workdir / "data"
        self.home.mkdir(parents=True)
        self.data.mkdir()
        self.port = free_port()
        self.env = dict(os.environ, SHOAL_HOME=str(self.home), SHOAL_SERVER=f"http://127.0.0.1:{self.port}")
        self.server = None
        self.notes = []

    def cli(self, *args, timeout=60):
        return subprocess.run([self.shoal, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def start_server(self):
        log = open(self.home / "server.out", "ab")
        self.server = subprocess.Popen([self.shoal, "server", "--home", str(self.home), "--port", str(self.port)],
                                       env=self.env, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.cli("list").returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def stop_server(self, sig=signal.SIGTERM):
        if self.server and self.server.poll() is None:
            self.server.send_signal(sig)
            self.server.wait(15)
        self.server = None

    def status(self, job):
        result = self.cli("status", job, "--json")
        return json.loads(result.stdout) if result.returncode == 0 else None

    def spec(self):
        shutil.copy(HERE / "chaos_job.py", self.dir / "chaos_job.py")
        spec = self.dir / "job.yaml"
        spec.write_text(f"""name: chaos-{self.fault}
max_attempts: 3
env:
  CHAOS_DIR: {self.data}
timeouts:
  heartbeat: 5s
  hang: 4s
  on_hang: fail
roles:
  worker:
    instances: 2
    cpus: 0.5
    memory: 256M
    command: /usr/bin/python3 chaos_job.py
""")
        return spec

    def wait(self, job, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            detail = self.status(job)
            if detail and condition(detail):
                return detail
            time.sleep(0.2)
        raise TimeoutError(f"timed out after {timeout}s waiting for {what}")

    def job_process(self, job, kind, rank=1):
        """The pid of the job's AM ('am'), a task's agent ('agent') or its program ('program')."""
        for pid, cmdline, env in processes_with_env(f"SHOAL_JOB_ID={job}"):
            if b"SHOAL_HOME=" + str(self.home).encode() not in env:
                continue
            is_rank = b"\0SHOAL_RANK=%d\0" % rank in b"\0" + env
            if kind == "am" and " am " in f" {cmdline}" and "shoal" in cmdline:
                return pid
            if kind == "agent" and " container " in f" {cmdline}" and f"--index {rank} " in f"{cmdline} ":
                return pid
            if kind == "program" and "chaos_job.py" in cmdline and "/bin/sh" not in cmdline and is_rank:
                return pid
        return None

    def inject(self, job):
        if self.fault == "server-kill9":
            self.stop_server(signal.SIGKILL)
            time.sleep(1)
            self.start_server()
            return
        if self.fault == "disk-full":
            # the job's data disk fills up: a tmpfs mounted over the data folder, then filled
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(self.data)], check=True)
            subprocess.run(["dd", "if=/dev/zero", f"of={self.data}/filler", "bs=64k", "count=64"],
                           capture_output=True)
            return
        kind = {"user-kill9": "program", "agent-kill9": "agent", "am-kill9": "am", "sigstop-worker": "program"}[self.fault]
        pid = None
        deadline = time.monotonic() + 10
        while pid is None and time.monotonic() < deadline:
            pid = self.job_process(job, kind)
            time.sleep(0.05)
        if pid is None:
            raise RuntimeError(f"no {kind} process of {job} to fault")
        os.kill(pid, signal.SIGSTOP if self.fault == "sigstop-worker" else signal.SIGKILL)

    def execute(self):
        """Returns (outcome, orphans, lost_outputs); outcome: recovered, failed-cleanly or bad."""
        self.start_server()
        try:
            submitted = self.cli("submit", str(self.spec()))
            if submitted.returncode != 0:
                raise RuntimeError("submit failed: " + submitted.stderr)
            job = submitted.stdout.strip()
            self.wait(job, lambda d: d["state"] == "RUNNING" and any(
                t.get("progress", 0) >= 0.1 for t in d["attempts"][-1].get("tasks", [])), 60, "the job to make progress")
            self.inject(job)
            final = self.wait(job, lambda d: d["state"] in ("SUCCEEDED", "FAILED", "KILLED"), 180, "the job to end")
            outcome = self.judge(final)
            orphans = self.orphans(job)
            lost = self.lost_outputs(final)
            # the history survives a server restart unchanged
            self.stop_server()
            self.start_server()
            again = self.status(job)
            if not again or again["state"] != final["state"] or len(again["attempts"]) != len(final["attempts"]):
                self.notes.append("the restarted server tells a different story")
                outcome = "bad"
            return outcome, orphans, lost
        finally:
            self.stop_server(signal.SIGKILL)
            for pid, _, _ in processes_with_env(f"SHOAL_HOME={self.home}"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["umount", "-l", str(self.data)], capture_output=True)

    def judge(self, final):
        attempts = final["attempts"]
        if any(a["state"] not in ("SUCCEEDED", "FAILED", "KILLED") for a in attempts):
            self.notes.append("an attempt is not final: " + ", ".join(a["state"] for a in attempts))
            return "bad"
        if attempts and attempts[-1]["state"] != final["state"]:
            self.notes.append(f"the job is {final['state']} but its last attempt {attempts[-1]['state']}")
            return "bad"
        if final["state"] == "SUCCEEDED":
            retried = self.fault in ("user-kill9", "agent-kill9", "am-kill9", "sigstop-worker")
            if retried and len(attempts) < 2:
                self.notes.append(f"a fault in the only attempt, yet it SUCCEEDED: {attempts}")
                return "bad"
            if self.fault == "server-kill9" and len(attempts) != 1:
                self.notes.append(f"the server's restart cost the running attempt: {len(attempts)} attempts")
                return "bad"
            if retried and not any("resumed from 0" not in (self.data / f"output-{r}").read_text()
                                   for r in (0, 1) if (self.data / f"output-{r}").exists()):
                self.notes.append("the retry started over instead of resuming from the checkpoint")
                return "bad"
            return "recovered"
        message = final.get("message", "")
        causes = {"disk-full": "No space left", "sigstop-worker": "hung", "user-kill9": "signal 9",
                  "agent-kill9": "container", "am-kill9": "application master", "server-kill9": ""}
        if final["state"] == "FAILED" and message and causes[self.fault] in message:
            return "failed-cleanly"
        self.notes.append(f"{final['state']}: {message!r}")
        return "bad"

    def orphans(self, job):
        """Processes of the job (its id and this home in their environment) still running
        a few seconds after it ended."""
        home = b"SHOAL_HOME=" + str(self.home).encode()
        deadline = time.monotonic() + 10
        while True:
            left = [(pid, cmd) for pid, cmd, env in processes_with_env(f"SHOAL_JOB_ID={job}") if home in env]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if left:
            self.notes.append("left running: " + "; ".join(f"{pid} {cmd[:60]}" for pid, cmd in left))
        return len(left)

    def lost_outputs(self, final):
        try:
            names = os.listdir(self.data)
        except OSError:
            return 0
        lost = sum(1 for n in names if n.startswith("output-") and n.endswith(".tmp"))
        if final["state"] == "SUCCEEDED":
            for rank in (0, 1):
                path = self.data / f"output-{rank}"
                if not path.exists() or not path.read_text().startswith("done after"):
                    lost += 1
        if lost:
            self.notes.append(f"{lost} outputs half committed or missing: {sorted(names)}")
        return lost


FAULTS = ["user-kill9", "agent-kill9", "am-kill9", "server-kill9", "sigstop-worker", "disk-full"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="runs per fault (default 20)")
    parser.add_argument("--faults", default=",".join(FAULTS), help="comma-separated: " + ", ".join(FAULTS))
    parser.add_argument("--shoal", default=os.environ.get("SHOAL_BIN", str(REPO / "build" / "shoal")))
    args = parser.parse_args()
    faults = [f for f in args.faults.split(",") if f]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or args.runs < 1:
        print(f"chaos: unknown fault(s) {unknown}; choose from {', '.join(FAULTS)}" if unknown else "chaos: --runs must be >= 1",
              file=sys.stderr)
        return 2
    rows, ok = [], True
    scratch = Path(tempfile.mkdtemp(prefix="shoal-chaos-"))
    for fault in faults:
        counts = {"recovered": 0, "failed-cleanly": 0, "bad": 0, "orphans": 0, "lost": 0}
        for n in range(args.runs):
            run = Run(args.shoal, fault, scratch / f"{fault}-{n}")
            started = time.monotonic()
            try:
                outcome, orphans, lost = run.execute()
            except Exception as error:  # a run that could not even be judged is a bad run
                outcome, orphans, lost = "bad", 0, 0
                run.notes.append(f"{type(error).__name__}: {error}")
            counts[outcome] += 1
            counts["orphans"] += orphans
            counts["lost"] += lost
            print(f"chaos: {fault} run {n + 1}/{args.runs}: {outcome} in {time.monotonic() - started:.1f}s"
                  + "".join(f"\n  {note}" for note in run.notes), flush=True)
            if outcome == "bad" or orphans or lost:
                ok = False
            else:
                shutil.rmtree(run.dir, ignore_errors=True)
        rows.append((fault, args.runs, counts["recovered"], counts["failed-cleanly"], counts["orphans"], counts["lost"]))
    print()
    print(f"| {'fault':<16} | runs | recovered | failed cleanly | orphans | lost outputs |")
    print(f"|{'-' * 18}|------|-----------|----------------|---------|--------------|")
    for fault, runs, recovered, failed, orphans, lost in rows:
        print(f"| {fault:<16} | {runs:>4} | {recovered:>9} | {failed:>14} | {orphans:>7} | {lost:>12} |")
    if ok:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"\nchaos: some runs went wrong; their folders are under {scratch}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
