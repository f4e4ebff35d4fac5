#!/usr/bin/env python3
"""Shoal's chaos suite: scripted faults against real jobs.

Each run starts a fresh server, submits a 2-worker job that checkpoints every step and
commits an output at the end (chaos_job.py), injects one fault while the job runs, and
checks what users care about:
  - the job ends as docs/reliability.md promises for its fault (EXPECTED): recovered
    (SUCCEEDED, resuming from its checkpoint after a retry, or within the same attempt for
    the server's restart and hostile clients), or for a full disk FAILED naming the disk;
  - no process of the job is left running (nor, on Slurm, a batch job or step), and no
    cgroup of its attempts is left on this host;
  - no output is half committed (no *.tmp, every output complete when the job succeeded;
    on S3: no _SUCCESS over a partial upload, no truncated or foreign object outside
    _temporary/, every object whole when the job succeeded);
  - the history agrees (attempts final, the job's state that of its last attempt), and a
    restarted server shows the same.
It prints a table: fault, runs, recovered, failed cleanly, orphans, lost outputs; and
exits 1 if any run ended otherwise than its fault's expected outcome, left a process or
lost output,
or if a fault could not run because the service it needs could not be started.

Faults on the embedded local cluster: user-kill9, agent-kill9, am-kill9, server-kill9,
sigstop-worker, disk-full, hostile-clients (1,000 connections that only connect, 200 that
send their headers a byte at a time and 200 long polls held against the server until the
job ends, while the CLI must keep answering: the job must succeed in its first attempt).
Against a real S3 service (a single-node Ceph RADOS Gateway,
scripts/ceph-up.sh, started here when it is not running and stopped at the end if it was
started here): s3-stop-download (radosgw killed while the tasks download their input,
brought back once the attempt has ended) and s3-stop-upload (the same while the tasks
upload their output). On the Slurm test cluster (scripts/slurm-up.sh, likewise):
slurmd-kill9 (the slurmd of a node running a task killed with SIGKILL, restarted once the
attempt has ended).

s3-stop-upload runs with timeouts.hang of 4 s and on_hang: fail, so it also checks that an
upload longer than that is not taken for a hang (it was, until agents' heartbeats during an
upload counted as activity).

  tests/chaos/chaos.py                 # the long version: every fault 20 times
  tests/chaos/chaos.py --runs 1        # the short version CI runs
  tests/chaos/chaos.py --faults am-kill9,sigstop-worker --runs 5
"""
import argparse
import base64
import resource
import threading
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import chaos_job  # noqa: E402  (the job's own helpers: what its outputs must hold)
import procfs  # noqa: E402  (tests/procfs.py: other processes' environments, as Shoal's sweep reads them)

LOCAL_FAULTS = ["user-kill9", "agent-kill9", "am-kill9", "server-kill9", "sigstop-worker", "disk-full", "hostile-clients"]
S3_FAULTS = ["s3-stop-download", "s3-stop-upload"]
SLURM_FAULTS = ["slurmd-kill9"]
FAULTS = LOCAL_FAULTS + S3_FAULTS + SLURM_FAULTS
# What docs/reliability.md promises for each fault: the job recovers (SUCCEEDED; after a
# retry that resumes from its checkpoint for faults inside the attempt, in the same attempt
# for the server's restart and hostile clients), except a full disk, which no retry can
# cure: the job fails cleanly, naming the disk. Any other outcome is a bad run.
EXPECTED = {fault: "recovered" for fault in FAULTS} | {"disk-full": "failed-cleanly"}
# slurmd-kill9 has two node kinds (a node with a task only; the node of the AM's batch
# step), one per run number's parity: even the short version runs both.
MIN_RUNS = {"slurmd-kill9": 2}

BUCKET = "shoal-chaos"
INPUT_PREFIX = "chaos-inputs"
INPUT_OBJECTS, INPUT_MB = 2, 160          # one object per worker: the download lasts ~0.5 s or more
OUTPUT_FILES, OUTPUT_MB = 32, 4           # per worker: 128 MiB in 32 PUTs, 4 at a time
S3_STEPS = 8                              # the S3 jobs train briefly: the fault is in their data
SLURM_STEPS = 240                         # 36 s: Slurm needs ~30 s to call a silent node down
SLURM_BRIDGE = "10.253.0.1"


def processes_with_env(marker):
    """Pids, command lines and environments of the processes whose environment holds
    `marker` (NAME=value)."""
    found = []
    for pid in procfs.other_pids():
        env, cmdline = procfs.environment(pid), procfs.read(pid, "cmdline")
        if env is not None and cmdline is not None and procfs.has_marker(env, marker):
            found.append((pid, cmdline.replace(b"\0", b" ").decode(errors="replace"), env))
    return found


def programs_started_in(directory):
    """Pids and command lines of the job's programs (`python3 chaos_job.py`) whose working
    directory is `directory`, found by command line and folder, not by environment: what
    finds a program that cleared its environment, on any node of the test cluster (the
    nodes are namespaces of this machine)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if b"chaos_job.py" not in cmdline:
                continue
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if cwd == str(directory) or cwd.startswith(str(directory) + "/"):
            found.append((int(entry), cmdline.replace(b"\0", b" ").decode(errors="replace")))
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_alive(pid):
    """True while `pid` runs (a zombie counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def process_name(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def wait_until(condition, timeout, interval=0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


class ServiceUnavailable(Exception):
    """A service a fault needs could not be started: the fault cannot run."""


class Ceph:
    """The single-node Ceph of scripts/ceph-up.sh, and just enough S3 (curl's SigV4) to
    prepare inputs and inspect outputs. Started once for every S3 fault of the suite."""

    def __init__(self):
        self.state = Path(os.environ.get("SHOAL_CEPH_DIR", "/var/tmp/shoal-ceph"))
        self.started_here = False
        self.env = None
        self.gateway_command = None  # set while this suite has the gateway stopped
        self.inputs = None           # name -> [size, sha256] of the shared input objects

    def answers(self, endpoint):
        return subprocess.run(["curl", "-s", "-o", "/dev/null", "--max-time", "2", endpoint + "/"],
                              capture_output=True).returncode == 0

    def running(self):
        try:
            env = dict(line.split("=", 1) for line in (self.state / "s3.env").read_text().split())
        except (OSError, ValueError):
            return None
        return env if self.answers(env["AWS_ENDPOINT_URL"]) else None

    def ensure(self):
        if self.env:
            return self.env
        for tool in ("ceph-mon", "ceph-osd", "radosgw", "curl"):
            if not shutil.which(tool):
                raise ServiceUnavailable(f"Ceph cannot be started: {tool} is missing (scripts/install-deps.sh)")
        env = self.running()
        if not env:
            print("chaos: starting Ceph (scripts/ceph-up.sh) for the S3 faults", flush=True)
            started = time.monotonic()
            try:
                up = subprocess.run([str(REPO / "scripts" / "ceph-up.sh")], capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                raise ServiceUnavailable("Ceph cannot be started: scripts/ceph-up.sh ran over 300 s")
            self.started_here = True
            if up.returncode != 0:
                raise ServiceUnavailable("Ceph cannot be started: scripts/ceph-up.sh exited "
                                         f"{up.returncode}:\n{tail(up.stdout + up.stderr)}")
            env = self.running()
            if not env:
                raise ServiceUnavailable(f"Ceph cannot be started: the gateway in {self.state}/s3.env does not answer")
            print(f"chaos: Ceph is up in {time.monotonic() - started:.0f}s", flush=True)
        self.env = env
        self.endpoint = env["AWS_ENDPOINT_URL"]
        self.base = ["curl", "-sS", "--max-time", "60", "--aws-sigv4", f"aws:amz:{env.get('AWS_REGION', 'us-east-1')}:s3",
                     "--user", f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}",
                     "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
        code, body = self.curl("-X", "PUT", f"{self.endpoint}/{BUCKET}")
        if code not in (200, 409):
            raise ServiceUnavailable(f"Ceph is up but the bucket {BUCKET} cannot be made: HTTP {code} {body[:200]!r}")
        return env

    def curl(self, *args, data=None):
        result = subprocess.run([*self.base, "-w", "\n%{http_code}", *args], input=data, capture_output=True, timeout=90)
        body, _, code = result.stdout.rpartition(b"\n")
        return int(code or 0), body

    def url(self, key, query=""):
        return f"{self.endpoint}/{BUCKET}/{urllib.parse.quote(key)}" + (f"?{query}" if query else "")

    def objects(self, prefix):
        """{key: size} of every object under `prefix`."""
        found, token = {}, None
        while True:
            query = {"list-type": "2", "prefix": prefix}
            if token:
                query["continuation-token"] = token
            encoded = "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in sorted(query.items()))
            code, body = self.curl(f"{self.endpoint}/{BUCKET}?{encoded}")
            if code != 200:
                raise RuntimeError(f"listing s3://{BUCKET}/{prefix}: HTTP {code} {body[:200]!r}")
            text = body.decode()
            for entry in re.findall(r"<Contents>(.*?)</Contents>", text, re.S):
                found[re.search(r"<Key>([^<]*)</Key>", entry).group(1)] = int(re.search(r"<Size>(\d+)</Size>", entry).group(1))
            if "<IsTruncated>true</IsTruncated>" not in text:
                return found
            token = re.search(r"<NextContinuationToken>([^<]*)<", text).group(1)

    def get(self, key):
        code, body = self.curl(self.url(key))
        return body if code == 200 else None

    def sha256(self, key):
        body = self.get(key)
        return None if body is None else hashlib.sha256(body).hexdigest()

    def delete_prefix(self, prefix):
        keys = sorted(self.objects(prefix))
        for start in range(0, len(keys), 1000):
            xml = "<Delete><Quiet>true</Quiet>" + "".join(
                f"<Object><Key>{k}</Key></Object>" for k in keys[start:start + 1000]) + "</Delete>"
            md5 = base64.b64encode(hashlib.md5(xml.encode()).digest()).decode()
            self.curl("-X", "POST", "-H", f"Content-MD5: {md5}", "--data-binary", "@-",
                      f"{self.endpoint}/{BUCKET}?delete", data=xml.encode())

    def ensure_inputs(self, scratch: Path):
        """The download faults' input: INPUT_OBJECTS objects of INPUT_MB MiB, made once."""
        if self.inputs:
            return self.inputs
        have = self.objects(INPUT_PREFIX + "/")
        inputs = {}
        for n in range(INPUT_OBJECTS):
            name = f"part-{n}.bin"
            path = scratch / name
            digest = hashlib.sha256()
            with open(path, "wb") as f:
                for mib in range(INPUT_MB):
                    block = chaos_job.output_block(1000 + n, 0, mib)
                    digest.update(block)
                    f.write(block)
            inputs[name] = [INPUT_MB << 20, digest.hexdigest()]
            if have.get(f"{INPUT_PREFIX}/{name}") != INPUT_MB << 20:
                code, body = self.curl("-T", str(path), self.url(f"{INPUT_PREFIX}/{name}"))
                if code != 200:
                    raise RuntimeError(f"cannot put the input {name}: HTTP {code} {body[:200]!r}")
            path.unlink()
        self.inputs = inputs
        return inputs

    def gateway_pid(self):
        try:
            pid = int((self.state / "run" / "client.rgw.a.pid").read_text())
        except (OSError, ValueError):
            return None
        return pid if process_alive(pid) and process_name(pid) == "radosgw" else None

    def stop_gateway(self):
        """radosgw killed with SIGKILL, as a crash; what it ran as is kept to bring it back."""
        pid = self.gateway_pid()
        if pid is None:
            raise RuntimeError(f"no radosgw to stop (pid file {self.state}/run/client.rgw.a.pid)")
        self.gateway_command = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        os.kill(pid, signal.SIGKILL)
        if not wait_until(lambda: not process_alive(pid), 10, 0.02):
            raise RuntimeError(f"radosgw {pid} outlived SIGKILL")

    def start_gateway(self):
        """radosgw again, as it ran (it daemonizes), until the endpoint answers."""
        if self.gateway_command is None:
            return
        with open(self.state / "log" / "daemons.out", "ab") as log:
            subprocess.run(self.gateway_command, stdout=log, stderr=log, timeout=60)
        if not wait_until(lambda: self.answers(self.endpoint), 60, 0.1):
            raise ServiceUnavailable(f"radosgw did not come back at {self.endpoint} (see {self.state}/log)")
        self.gateway_command = None

    def close(self):
        try:
            self.start_gateway()
        finally:
            if self.started_here:
                subprocess.run([str(REPO / "scripts" / "ceph-down.sh")], capture_output=True, timeout=120)
                print("chaos: stopped Ceph (scripts/ceph-down.sh), which this run had started", flush=True)


class Slurm:
    """The test Slurm cluster of scripts/slurm-up.sh: node1 and node2, each slurmd in its
    own network namespace. Started once for every Slurm fault of the suite."""

    RUN = Path("/run/shoal-slurm")
    NODES = {"node1": "10.253.0.11", "node2": "10.253.0.12"}

    def __init__(self):
        self.started_here = False
        self.ready = False
        self.stopped = set()  # nodes whose slurmd this suite killed and has not restarted

    @staticmethod
    def cmd(*args, timeout=30):
        try:
            return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""

    def node_states(self):
        states = {}
        for line in self.cmd("sinfo", "-h", "-N", "-o", "%N %T").splitlines():
            name, _, state = line.partition(" ")
            states[name] = state.strip()
        return states

    def running(self):
        return ("UP" in self.cmd("scontrol", "ping") and set(self.NODES) <= set(self.node_states())
                and all(Path(f"/run/netns/shoal-{n}").exists() for n in self.NODES))

    def idle(self):
        states = self.node_states()
        return all(states.get(n, "").rstrip("*") == "idle" for n in self.NODES)

    def ensure(self):
        if self.ready:
            return self.wait_idle()
        if os.geteuid() != 0:
            raise ServiceUnavailable("the Slurm test cluster cannot be started: it needs root (namespaces, daemons)")
        for tool in ("slurmctld", "slurmd", "munged", "sbatch", "squeue", "sinfo"):
            if not shutil.which(tool):
                raise ServiceUnavailable(f"the Slurm test cluster cannot be started: {tool} is missing "
                                         "(scripts/install-deps.sh)")
        if not self.running():
            print("chaos: starting the Slurm test cluster (scripts/slurm-up.sh) for slurmd-kill9", flush=True)
            started = time.monotonic()
            try:
                up = subprocess.run([str(REPO / "scripts" / "slurm-up.sh")], capture_output=True, text=True, timeout=180)
            except subprocess.TimeoutExpired:
                raise ServiceUnavailable("the Slurm test cluster cannot be started: scripts/slurm-up.sh ran over 180 s")
            self.started_here = True
            if up.returncode != 0 or not self.running():
                raise ServiceUnavailable("the Slurm test cluster cannot be started: scripts/slurm-up.sh exited "
                                         f"{up.returncode}:\n{tail(up.stdout + up.stderr)}")
            print(f"chaos: Slurm is up in {time.monotonic() - started:.0f}s", flush=True)
        self.ready = True
        self.wait_idle()

    def wait_idle(self):
        if not wait_until(self.idle, 60, 0.5):
            raise RuntimeError(f"the Slurm nodes are not idle before the run: {self.node_states()}")

    def kill_slurmd(self, node):
        pidfile = self.RUN / f"slurmd-{node}.pid"
        try:
            pid = int(pidfile.read_text())
        except (OSError, ValueError):
            raise RuntimeError(f"no slurmd pid file for {node} ({pidfile})")
        if not process_alive(pid) or process_name(pid) != "slurmd":
            raise RuntimeError(f"{pidfile} names {pid}, which is not a running slurmd")
        self.stopped.add(node)
        os.kill(pid, signal.SIGKILL)
        if not wait_until(lambda: not process_alive(pid), 10, 0.02):
            raise RuntimeError(f"slurmd {pid} of {node} outlived SIGKILL")
        pidfile.unlink(missing_ok=True)  # as scripts/slurm-node.sh stop leaves it: the node can start again

    def start_slurmd(self, node):
        if node not in self.stopped:
            return
        started = subprocess.run([str(REPO / "scripts" / "slurm-node.sh"), "start", node.removeprefix("node")],
                                 capture_output=True, text=True, timeout=60)
        if started.returncode != 0:
            raise RuntimeError(f"slurmd of {node} did not start again: {tail(started.stderr)}")
        self.stopped.discard(node)

    def jobs_of(self, home):
        """Slurm jobs (any state squeue still lists) whose batch script lies in `home`."""
        return [line for line in self.cmd("squeue", "-h", "-o", "%i %j %T %o").splitlines() if str(home) in line]

    def close(self):
        try:
            for node in sorted(self.stopped):
                self.start_slurmd(node)
        finally:
            if self.started_here:
                subprocess.run([str(REPO / "scripts" / "slurm-down.sh")], capture_output=True, timeout=120)
                print("chaos: stopped the Slurm test cluster (scripts/slurm-down.sh), which this run had started",
                      flush=True)


class Run:
    """One fault against one job, in a private home with a server on a fixed port."""

    def __init__(self, shoal, fault, workdir: Path, number=0, ceph=None, slurm=None):
        self.shoal, self.fault, self.dir, self.number = shoal, fault, workdir, number
        self.ceph, self.slurm = ceph, slurm
        self.home = workdir / "home"
        self.data = workdir / "data"
        self.home.mkdir(parents=True)
        self.data.mkdir()
        self.port = free_port()
        host = SLURM_BRIDGE if fault in SLURM_FAULTS else "127.0.0.1"
        self.server_args = ["--cluster", "slurm", "--host", SLURM_BRIDGE] if fault in SLURM_FAULTS else []
        self.env = dict(os.environ, SHOAL_HOME=str(self.home), SHOAL_SERVER=f"http://{host}:{self.port}")
        self.prefix = f"chaos/{fault}-{number}-{int(time.time() * 1000)}"  # this run's S3 keys
        if fault in S3_FAULTS:
            self.env.update(ceph.env)
        self.server = None
        self.notes = []
        self.victim = None

    def cli(self, *args, timeout=60):
        return subprocess.run([self.shoal, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def start_server(self):
        log = open(self.home / "server.out", "ab")
        self.server = subprocess.Popen([self.shoal, "server", "--home", str(self.home), "--port", str(self.port),
                                        *self.server_args],
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
        env = {"CHAOS_DIR": str(self.data)}
        extra, cpus, memory = "", 0.5, "256M"
        if self.fault == "s3-stop-download":
            env["CHAOS_STEPS"] = S3_STEPS
            (self.data / "inputs.json").write_text(json.dumps(self.ceph.inputs))
            extra = f'inputs:\n  - {{name: train, uri: "s3://{BUCKET}/{INPUT_PREFIX}/part-*.bin", mode: download}}\n'
        if self.fault == "s3-stop-upload":
            env.update(CHAOS_STEPS=S3_STEPS, CHAOS_OUTPUT_FILES=OUTPUT_FILES, CHAOS_OUTPUT_MB=OUTPUT_MB)
            extra = f'outputs:\n  - {{name: model, uri: "s3://{BUCKET}/{self.prefix}/model"}}\n'
        if self.fault in SLURM_FAULTS:
            # 2500M: a node (4000 MB) holds one task, so the job spans both nodes
            env["CHAOS_STEPS"], cpus, memory = SLURM_STEPS, 1, "2500M"
        spec.write_text(f"name: chaos-{self.fault}\nmax_attempts: 3\nenv:\n"
                        + "".join(f"  {k}: {json.dumps(str(v))}\n" for k, v in env.items()) + extra
                        + f"""timeouts:
  heartbeat: 5s
  hang: 4s
  on_hang: fail
roles:
  worker:
    instances: 2
    cpus: {cpus}
    memory: {memory}
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

    def wait_for_fault_point(self, job):
        """Until the moment the fault is meant for: the download or the upload under way, or
        the job making progress."""
        if self.fault == "s3-stop-download":
            # a download is under way while its object's .part file exists (storage writes
            # into NAME.part and renames it when whole); both tasks', ideally
            pattern = str(self.home / "jobs" / job / "attempt-1" / "worker-*" / "train" / "*.part")
            if not wait_until(lambda: glob.glob(pattern), 60, 0.01):
                raise TimeoutError("timed out after 60s waiting for the download to start")
            wait_until(lambda: len(glob.glob(pattern)) == INPUT_OBJECTS, 3, 0.01)
            return
        if self.fault == "s3-stop-upload":
            # the programs end (their output files are written), then the agents upload
            done = [self.data / "output-0", self.data / "output-1"]
            if not wait_until(lambda: any(p.exists() for p in done), 60, 0.02):
                raise TimeoutError("timed out after 60s waiting for a program to end")
            if not wait_until(lambda: any("/_temporary/" in k for k in self.ceph.objects(self.prefix + "/")), 30, 0.02):
                raise TimeoutError("timed out after 30s waiting for the upload to start")
            return
        if self.fault in SLURM_FAULTS:
            # both tasks placed (their nodes known) and training: as early as that, so that
            # Slurm notices the dead slurmd (~30 s: pings that time out) before the job ends
            self.wait(job, lambda d: d["state"] == "RUNNING" and len(tasks := d["attempts"][-1].get("tasks", [])) == 2
                      and all(t.get("state") == "RUNNING" and t.get("host") for t in tasks)
                      and any(t.get("progress", 0) > 0 for t in tasks), 90, "both tasks to run and make progress")
            return
        self.wait(job, lambda d: d["state"] == "RUNNING" and any(
            t.get("progress", 0) >= 0.1 for t in d["attempts"][-1].get("tasks", [])), 60, "the job to make progress")

    def first_attempt_ended(self, job, timeout):
        """Waits until attempt 1 is final; False if it is not within `timeout`."""
        ended = wait_until(lambda: (d := self.status(job)) and d["attempts"] and d["attempts"][0]["state"] in (
            "SUCCEEDED", "FAILED", "KILLED"), timeout, 0.2)
        if not ended:
            self.notes.append(f"attempt 1 did not end within {timeout}s of the fault")
        return ended

    def inject(self, job):
        if self.fault == "server-kill9":
            self.stop_server(signal.SIGKILL)
            time.sleep(1)
            self.start_server()
            return
        if self.fault == "hostile-clients":
            self.hold_hostile_clients(job)
            return
        if self.fault == "disk-full":
            # the job's data disk fills up: a tmpfs mounted over the data folder, then filled
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(self.data)], check=True)
            subprocess.run(["dd", "if=/dev/zero", f"of={self.data}/filler", "bs=64k", "count=64"],
                           capture_output=True)
            return
        if self.fault in S3_FAULTS:
            # S3 stays away until the attempt it hit has ended, then comes back for the retries
            self.ceph.stop_gateway()
            try:
                self.in_flight_at_fault = self.transfer_in_flight(job)
                self.first_attempt_ended(job, 120)
            finally:
                self.ceph.start_gateway()
            return
        if self.fault == "slurmd-kill9":
            attempt = self.status(job)["attempts"][-1]
            am_host = attempt.get("am_addr", "").split(":")[0]
            hosts = {t["host"] for t in attempt["tasks"] if t.get("host")}
            nodes = [n for n, addr in sorted(Slurm.NODES.items()) if addr in hosts]
            # even runs: a node with only a task on it; odd runs: the node of the AM (the batch step)
            others = [n for n in nodes if Slurm.NODES[n] != am_host]
            mine = [n for n in nodes if Slurm.NODES[n] == am_host]
            pick = (mine or others) if self.number % 2 else (others or mine)
            if not pick:
                raise RuntimeError(f"no node runs a task of {job}: {attempt['tasks']}")
            self.victim = pick[0]
            self.victim_has_am = Slurm.NODES[self.victim] == am_host
            self.slurm.kill_slurmd(self.victim)
            try:
                self.first_attempt_ended(job, 120)
            finally:
                self.slurm.start_slurmd(self.victim)
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

    def hold_hostile_clients(self, job):
        """Opens the hostile connections and, on a thread, keeps the slow ones trickling and
        checks every second that `shoal list` still answers, until release_hostile_clients."""
        def connect():
            return socket.create_connection(("127.0.0.1", self.port), timeout=30)
        version = (self.status(job) or {}).get("version", 1)
        self.hostile = [connect() for _ in range(1000)]
        slow = []
        for _ in range(200):
            slow.append(connect())
            slow[-1].sendall(b"GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        for _ in range(200):
            self.hostile.append(connect())
            self.hostile[-1].sendall(f"GET /api/v1/jobs/{job}?wait_version={version + 100000}&wait_ms=60000 HTTP/1.1\r\n"
                                     f"Host: 127.0.0.1\r\n\r\n".encode())
        self.hostile += slow
        self.hostile_done = threading.Event()

        def pester():
            while not self.hostile_done.wait(1.0):
                for conn in slow:
                    try:
                        conn.sendall(b"a")
                    except OSError:
                        pass
                listed = self.cli("list", timeout=30)
                if listed.returncode != 0:
                    self.notes.append(f"`shoal list` failed under hostile clients: {listed.stderr.strip()[:200]}")
        self.hostile_thread = threading.Thread(target=pester, daemon=True)
        self.hostile_thread.start()

    def release_hostile_clients(self):
        if getattr(self, "hostile_thread", None):
            self.hostile_done.set()
            self.hostile_thread.join()
            self.hostile_thread = None
        for conn in getattr(self, "hostile", []):
            conn.close()
        self.hostile = []

    def transfer_in_flight(self, job):
        """Right after S3 went away: was the transfer the fault aims at still going on?"""
        if self.fault == "s3-stop-download":
            return bool(glob.glob(str(self.home / "jobs" / job / "attempt-1" / "worker-*" / "train" / "*.part")))
        # a task is reported ended only once its upload is done (docs/data.md)
        tasks = (self.status(job) or {"attempts": [{"tasks": []}]})["attempts"][0]["tasks"]
        return any(t.get("state") not in ("SUCCEEDED", "FAILED", "KILLED") for t in tasks)

    def execute(self):
        """Returns (outcome, orphans, lost_outputs); outcome: recovered, failed-cleanly or bad."""
        if self.fault in SLURM_FAULTS:
            self.slurm.wait_idle()
        self.start_server()
        try:
            submitted = self.cli("submit", str(self.spec()))
            if submitted.returncode != 0:
                raise RuntimeError("submit failed: " + submitted.stderr)
            job = submitted.stdout.strip()
            self.wait_for_fault_point(job)
            self.inject(job)
            try:
                final = self.wait(job, lambda d: d["state"] in ("SUCCEEDED", "FAILED", "KILLED"), 180, "the job to end")
            finally:
                self.release_hostile_clients()
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
            if outcome != "bad" and not orphans and not lost and self.fault in S3_FAULTS:
                self.ceph.delete_prefix(self.prefix + "/")
            return outcome, orphans, lost
        finally:
            self.stop_server(signal.SIGKILL)
            for pid, _, _ in processes_with_env(f"SHOAL_HOME={self.home}"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            procfs.remove_cgroups(procfs.server_cgroups(self.home))  # the server, killed, kept its top group
            subprocess.run(["umount", "-l", str(self.data)], capture_output=True)
            if self.slurm and self.fault in SLURM_FAULTS:
                for line in self.slurm.jobs_of(self.home):
                    self.slurm.cmd("scancel", line.split()[0])

    def names_s3(self, message):
        """Whether a message names the S3 object or output it failed on, or the endpoint."""
        endpoint = self.ceph.endpoint.split("://", 1)[-1]
        return f"s3://{BUCKET}/" in message or endpoint in message

    def judge(self, final):
        outcome = self.classify(final)
        if outcome != "bad" and outcome != EXPECTED[self.fault]:
            self.notes.append(f"{self.fault} must end {EXPECTED[self.fault]}, but it {outcome}: "
                              f"{final['state']} {final.get('message', '')!r}")
            return "bad"
        return outcome

    def classify(self, final):
        attempts = final["attempts"]
        if any(a["state"] not in ("SUCCEEDED", "FAILED", "KILLED") for a in attempts):
            self.notes.append("an attempt is not final: " + ", ".join(a["state"] for a in attempts))
            return "bad"
        if attempts and attempts[-1]["state"] != final["state"]:
            self.notes.append(f"the job is {final['state']} but its last attempt {attempts[-1]['state']}")
            return "bad"
        if self.fault in S3_FAULTS:
            # S3 was away for the whole of attempt 1: it must have failed, saying on what
            first = attempts[0]
            if not getattr(self, "in_flight_at_fault", True):
                self.notes.append("the fault came too late: the transfer had ended before radosgw was stopped")
                return "bad"
            if first["state"] != "FAILED" or not self.names_s3(first.get("message", "")):
                self.notes.append(f"attempt 1, with S3 away, ended {first['state']}: {first.get('message', '')!r}")
                return "bad"
            self.notes.append(f"attempt 1: {first['state']} {first.get('message', '')!r}")
        if self.fault in SLURM_FAULTS:
            where = f"{self.victim} ({'the AM and a task' if self.victim_has_am else 'a task'})"
            # whatever noticed first (Slurm's NODE_FAIL, the AM), attempt 1 must name the dead node
            if len(attempts) > 1 and not re.search(rf"\bnodes? (\S+, )*{self.victim}\b", attempts[0].get("message", "")):
                self.notes.append(f"slurmd killed on {where}; attempt 1 ended: {attempts[0].get('message', '')!r}")
                return "bad"
            self.notes.append(f"slurmd killed on {where}; attempt 1: {attempts[0]['state']} "
                              f"{attempts[0].get('message', '')!r}")
        if final["state"] == "SUCCEEDED":
            retried = self.fault in ("user-kill9", "agent-kill9", "am-kill9", "sigstop-worker", *S3_FAULTS)
            if retried and len(attempts) < 2:
                self.notes.append(f"a fault in the only attempt, yet it SUCCEEDED: {attempts}")
                return "bad"
            if self.fault in ("server-kill9", "hostile-clients") and len(attempts) != 1:
                self.notes.append(f"{self.fault} cost the running attempt: {len(attempts)} attempts")
                return "bad"
            if self.fault == "hostile-clients" and any("shoal list" in note for note in self.notes):
                return "bad"
            resumes = self.fault in ("user-kill9", "agent-kill9", "am-kill9", "sigstop-worker") or (
                self.fault in SLURM_FAULTS and len(attempts) > 1)
            if resumes and not any("resumed from 0" not in (self.data / f"output-{r}").read_text()
                                   for r in (0, 1) if (self.data / f"output-{r}").exists()):
                self.notes.append("the retry started over instead of resuming from the checkpoint")
                return "bad"
            return "recovered"
        message = final.get("message", "")
        if self.fault in S3_FAULTS:
            if final["state"] == "FAILED" and self.names_s3(message):
                return "failed-cleanly"
            self.notes.append(f"{final['state']}: {message!r}")
            return "bad"
        if self.fault == "hostile-clients":
            self.notes.append(f"hostile clients cost the job: {final['state']} {message!r}")
            return "bad"
        causes = {"disk-full": "No space left", "sigstop-worker": "hung", "user-kill9": "signal 9",
                  "agent-kill9": "container", "am-kill9": "application master", "server-kill9": "",
                  "slurmd-kill9": "NODE_FAIL"}
        if final["state"] == "FAILED" and message and causes[self.fault] in message:
            return "failed-cleanly"
        self.notes.append(f"{final['state']}: {message!r}")
        return "bad"

    def orphans(self, job):
        """Processes of the job (its id and this home in their environment, or its program
        by command line and folder) still running a few seconds after it ended; on Slurm also
        its batch jobs still listed, and a minute's grace: what ran on the node whose slurmd
        died ends when slurmd is back. Also its attempts' cgroups still there (each a
        leftover), which the server removes when an attempt ends."""
        home = b"SHOAL_HOME=" + str(self.home).encode()
        grace = 60 if self.fault in SLURM_FAULTS else 10
        deadline = time.monotonic() + grace
        while True:
            left = [(pid, cmd) for pid, cmd, env in processes_with_env(f"SHOAL_JOB_ID={job}") if home in env]
            seen = {pid for pid, _ in left}
            left += [(pid, cmd) for pid, cmd in programs_started_in(self.dir) if pid not in seen]
            slurm_jobs = self.slurm.jobs_of(self.home) if self.fault in SLURM_FAULTS else []
            groups = [g for g in procfs.groups_below(procfs.server_cgroups(self.home)) if f"/{job}." in g]
            if (not left and not slurm_jobs and not groups) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if left:
            self.notes.append("left running: " + "; ".join(f"{pid} {cmd[:60]}" for pid, cmd in left))
        if slurm_jobs:
            self.notes.append("left in Slurm: " + "; ".join(slurm_jobs))
        if groups:
            self.notes.append("cgroups left: " + "; ".join(groups))
        return len(left) + len(slurm_jobs) + len(groups)

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
        if self.fault == "s3-stop-upload":
            lost += self.lost_s3_outputs(final)
        if self.fault == "s3-stop-download":
            # an interrupted download leaves no NAME.part behind (nor a partial NAME)
            parts = glob.glob(str(self.home / "jobs" / "*" / "attempt-*" / "worker-*" / "train" / "*.part"))
            if parts:
                self.notes.append(f"interrupted downloads left behind: {parts}")
        return lost

    def lost_s3_outputs(self, final):
        """The commit protocol on S3 (docs/data.md): outside _temporary/ only whole files;
        _SUCCESS only over a complete output listing every file; both outputs committed
        when the job succeeded."""
        objects = self.ceph.objects(self.prefix + "/")
        lost = 0
        for index in (0, 1):
            dest = f"{self.prefix}/model/worker-{index}/"
            visible = {k[len(dest):]: size for k, size in objects.items()
                       if k.startswith(dest) and not k[len(dest):].startswith("_temporary/")}
            whole = {}
            for name, size in visible.items():
                if name == "_SUCCESS":
                    continue
                number = re.fullmatch(r"part-(\d{4})\.bin", name)
                digest = hashlib.sha256()
                if number:
                    for mib in range(OUTPUT_MB):
                        digest.update(chaos_job.output_block(index, int(number.group(1)), mib))
                if number and size == OUTPUT_MB << 20 and int(number.group(1)) < OUTPUT_FILES \
                        and self.ceph.sha256(dest + name) == digest.hexdigest():
                    whole[name] = True
                else:
                    lost += 1
                    self.notes.append(f"s3://{BUCKET}/{dest}{name} is visible but not a whole output file ({size} bytes)")
            expected = sorted(chaos_job.output_name(f) for f in range(OUTPUT_FILES))
            if "_SUCCESS" in visible:
                listing = sorted((self.ceph.get(dest + "_SUCCESS") or b"").decode().split())
                missing = [n for n in expected if n not in whole]
                if listing != expected or missing:
                    lost += 1
                    self.notes.append(f"s3://{BUCKET}/{dest}_SUCCESS over a partial output: lists {len(listing)}, "
                                      f"{len(missing)} files missing or not whole")
            elif final["state"] == "SUCCEEDED":
                lost += 1
                self.notes.append(f"the job SUCCEEDED but s3://{BUCKET}/{dest} has no _SUCCESS "
                                  f"({len(whole)} of {OUTPUT_FILES} files)")
        temporary = [k for k in objects if "/_temporary/" in k]
        if temporary:
            self.notes.append(f"{len(temporary)} objects left under _temporary/ (never read; not committed)")
        return lost


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="runs per fault (default 20)")
    parser.add_argument("--faults", default=",".join(FAULTS), help="comma-separated: " + ", ".join(FAULTS))
    parser.add_argument("--shoal", default=os.environ.get("SHOAL_BIN", str(REPO / "build" / "shoal")))
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # hostile-clients holds 1,400 connections
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    faults = [f for f in args.faults.split(",") if f]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or args.runs < 1:
        print(f"chaos: unknown fault(s) {unknown}; choose from {', '.join(FAULTS)}" if unknown else "chaos: --runs must be >= 1",
              file=sys.stderr)
        return 2
    rows, ok, runs_ok, not_run = [], True, True, []
    scratch = Path(tempfile.mkdtemp(prefix="shoal-chaos-"))
    ceph, slurm = Ceph(), Slurm()
    try:
        for fault in faults:
            try:
                if fault in S3_FAULTS:
                    ceph.ensure()
                    if fault == "s3-stop-download":
                        ceph.ensure_inputs(scratch)
                if fault in SLURM_FAULTS:
                    slurm.ensure()
            except (ServiceUnavailable, RuntimeError, OSError, subprocess.SubprocessError) as error:
                print(f"chaos: {fault}: NOT RUN: {error}", file=sys.stderr, flush=True)
                not_run.append((fault, str(error).splitlines()[0]))
                ok = False
                continue
            counts = {"recovered": 0, "failed-cleanly": 0, "bad": 0, "orphans": 0, "lost": 0}
            runs = max(args.runs, MIN_RUNS.get(fault, 1))
            for n in range(runs):
                run = Run(args.shoal, fault, scratch / f"{fault}-{n}", n, ceph, slurm)
                started = time.monotonic()
                try:
                    outcome, orphans, lost = run.execute()
                except Exception as error:  # a run that could not even be judged is a bad run
                    outcome, orphans, lost = "bad", 0, 0
                    run.notes.append(f"{type(error).__name__}: {error}")
                counts[outcome] += 1
                counts["orphans"] += orphans
                counts["lost"] += lost
                print(f"chaos: {fault} run {n + 1}/{runs}: {outcome} in {time.monotonic() - started:.1f}s"
                      + "".join(f"\n  {note}" for note in run.notes), flush=True)
                if outcome == "bad" or orphans or lost:
                    ok = runs_ok = False
                else:
                    shutil.rmtree(run.dir, ignore_errors=True)
            rows.append((fault, runs, counts["recovered"], counts["failed-cleanly"], counts["orphans"], counts["lost"]))
    finally:
        for service in (ceph, slurm):
            try:
                service.close()
            except Exception as error:
                print(f"chaos: {type(service).__name__}: {error}", file=sys.stderr)
                ok = False
    print()
    print(f"| {'fault':<16} | runs | recovered | failed cleanly | orphans | lost outputs |")
    print(f"|{'-' * 18}|------|-----------|----------------|---------|--------------|")
    for fault, runs, recovered, failed, orphans, lost in rows:
        print(f"| {fault:<16} | {runs:>4} | {recovered:>9} | {failed:>14} | {orphans:>7} | {lost:>12} |")
    for fault, reason in not_run:
        print(f"| {fault:<16} | NOT RUN: {reason}")
    if not_run:
        print(f"\nchaos: {len(not_run)} fault(s) could not run: their service could not be started", file=sys.stderr)
    if runs_ok:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"\nchaos: some runs went wrong; their folders are under {scratch}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
