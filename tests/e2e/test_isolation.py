"""Tasks confined on the local cluster (docs/isolation.md): each task runs in a cgroup of
its own, limited to its role's memory (agent included), CPUs and a process count; a task
over its memory is killed by the kernel and says so; a kill ends everything in the
attempt's cgroup, daemons that left their session with an empty environment included."""
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
import re
import signal
import time

import pytest

from conftest import SHOAL, Shoal, cmdline, processes_with_command, processes_with_env, wait_for, write_spec

# What a task reads of its own cgroup: the limits the kernel holds it to, whichever layout.
PROBE = r'''
import json, os
dirs = {}
for line in open("/proc/self/cgroup"):
    _, controllers, path = line.rstrip("\n").split(":", 2)
    for c in (controllers or "unified").split(","):
        dirs[c] = path
def read(path):
    try:
        return open(path).read().split()
    except OSError:
        return None
if "memory" in dirs:  # v1: a hierarchy per controller
    base = "/sys/fs/cgroup"
    found = {"memory": read(f"{base}/memory{dirs['memory']}/memory.limit_in_bytes"),
             "cpu": read(f"{base}/cpu{dirs['cpu']}/cpu.cfs_quota_us"),
             "pids": read(f"{base}/pids{dirs['pids']}/pids.max"),
             "path": dirs["memory"]}
else:
    here = "/sys/fs/cgroup" + dirs["unified"]
    found = {"memory": read(here + "/memory.max"), "cpu": read(here + "/cpu.max")[:1],
             "pids": read(here + "/pids.max"), "path": dirs["unified"]}
print("LIMITS " + json.dumps(found), flush=True)
'''


def running(pid):
    """Whether a process exists and has not ended (a zombie waiting for init has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def confined(shoal):
    shoal.start_server()
    limits = shoal.get_json("/api/v1/cluster")["task_limits"]
    if not limits["enforced"]:
        pytest.skip("this host gives Shoal no cgroups: " + limits["detail"])
    return shoal


def test_each_task_is_held_to_its_roles_memory_cpus_and_a_process_count(confined, tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    spec = write_spec(tmp_path, f"""
name: probe
roles:
  worker: {{instances: 2, cpus: 0.5, memory: 96M, command: /usr/bin/python3 {tmp_path}/probe.py}}
""")
    result, job_id = confined.run_job(spec, check=0)
    seen = []
    for index in (0, 1):
        line = re.search(r"^LIMITS (.*)$", confined.logs(job_id, index=index), re.M)
        assert line, confined.log_tails()
        limits = json.loads(line.group(1))
        assert limits["memory"] == [str(96 << 20)], limits
        assert limits["cpu"] == ["50000"], limits
        assert limits["pids"] == ["16384"], limits
        assert limits["path"].endswith(f"/{job_id}.1/worker-{index}"), limits
        seen.append(limits["path"])
    assert seen[0] != seen[1], "each task has a group of its own"
    assert "limits:" not in confined.run("status", job_id, check=0).stdout, "enforced: no warning"


def test_a_task_over_its_memory_is_killed_and_the_job_says_so(confined, tmp_path):
    spec = write_spec(tmp_path, """
name: greedy
roles:
  worker: {cpus: 0.5, memory: 64M, command: "/usr/bin/python3 -c 'x = bytearray(b\\"x\\") * (300 << 20); print(len(x))'"}
""")
    result, job_id = confined.run_job(spec, check=1)
    status = confined.status(job_id)
    assert status["state"] == "FAILED", status
    sentence = re.compile(r"worker\[0\] used more than its 64M of memory \(peak [0-9.]+M\) and was killed by the "
                          r"kernel; raise roles\.worker\.memory")
    task = status["attempts"][-1]["tasks"][0]
    assert sentence.search(task["message"]), task
    assert sentence.search(status["message"]), status["message"]
    assert sentence.search(confined.run("status", job_id, check=0).stdout)


def kilobytes(text, field):
    return int(re.search(rf"^{field}:\s+(\d+) kB$", text, re.M).group(1))


def memory_group_charge(pid):
    """Bytes the kernel charges the memory group a process is in (v1 memory.usage_in_bytes,
    v2 memory.current)."""
    unified = None
    for line in open(f"/proc/{pid}/cgroup"):
        _, controllers, path = line.rstrip("\n").split(":", 2)
        if "memory" in controllers.split(","):
            return int(open(f"/sys/fs/cgroup/memory{path}/memory.usage_in_bytes").read())
        if controllers == "":
            unified = path
    return int(open(f"/sys/fs/cgroup{unified}/memory.current").read())


def test_an_agent_holds_at_most_5_mb_of_its_own_and_its_task_is_charged_for_it(confined, tmp_path):
    """An agent's own resident memory is what it alone keeps resident: its anonymous pages
    (heap, stacks, what it wrote), top's RES less SHR. The rest of its VmRSS is the page
    cache of the binary and its libraries, shared with every process that maps them, and
    on Linux 6.18 it counts whole cached folios a touch maps (docs/isolation.md). The
    task's memory group, which admission counts, holds the agent and its program."""
    spec = write_spec(tmp_path, """
name: agents
roles:
  worker: {instances: 3, cpus: 0.1, memory: 32M, command: "sleep 3019"}
""")
    job_id = confined.submit(spec)
    wait_for(lambda: len(processes_with_command("sleep 3019")) == 3, 60, what="the three programs")
    agents = [p for p in confined.job_processes(job_id) if cmdline(p)[1:2] == [b"container"]]
    assert len(agents) == 3, agents
    time.sleep(3)  # a few heartbeats and resource samples: the agents' steady state
    for agent in agents:
        status = open(f"/proc/{agent}/status").read()
        rollup = open(f"/proc/{agent}/smaps_rollup").read()
        own = kilobytes(status, "RssAnon")
        seen = (f"agent {agent}: VmRSS {kilobytes(status, 'VmRSS')} kB, its own (RssAnon) {own} kB, shared "
                f"(RssFile) {kilobytes(status, 'RssFile')} kB, Pss {kilobytes(rollup, 'Pss')} kB, private "
                f"{kilobytes(rollup, 'Private_Clean') + kilobytes(rollup, 'Private_Dirty')} kB")
        charge = memory_group_charge(agent)
        seen += f"; its task's memory group (the agent and `sleep`) is charged {charge} bytes"
        print(seen)
        # Under a sanitizer the anonymous pages are ASan's shadow and quarantine.
        if "ASAN_OPTIONS" not in os.environ and "TSAN_OPTIONS" not in os.environ:
            assert own <= 5 * 1024, seen
            assert charge <= 5 << 20, seen
    confined.run("kill", job_id)
    confined.wait_state(job_id, ("KILLED", "FAILED"), 60)


def test_a_daemon_with_an_empty_environment_ends_when_its_container_is_killed(confined, tmp_path):
    # The daemon carries no marker Shoal could sweep for, and the container that would end
    # it as its subreaper is killed first: only the attempt's cgroup still holds it.
    spec = write_spec(tmp_path, """
name: daemon
roles:
  worker: {cpus: 0.25, memory: 64M, command: "setsid env -i sleep 3017 & sleep 300"}
""")
    job_id = confined.submit(spec)
    daemon = wait_for(lambda: processes_with_command("sleep 3017"), 30, what="the daemon")
    status = confined.kill_agent_and_wait(job_id)
    assert status["state"] == "FAILED", status
    wait_for(lambda: not processes_with_command("sleep 3017"), 10, what="the daemon to end with its attempt")
    assert not any(running(pid) for pid in daemon)


def test_the_attempts_cgroups_are_removed_when_it_ends(confined, tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    spec = write_spec(tmp_path, f"""
name: tidy
roles:
  worker: {{cpus: 0.25, memory: 64M, command: /usr/bin/python3 {tmp_path}/probe.py}}
""")
    result, job_id = confined.run_job(spec, check=0)
    path = json.loads(re.search(r"^LIMITS (.*)$", confined.logs(job_id), re.M).group(1))["path"]
    attempt_dir = path.rsplit("/", 1)[0]
    roots = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"]
    wait_for(lambda: not any(os.path.isdir(root + attempt_dir) and os.path.exists(root + attempt_dir + "/cgroup.procs")
                             for root in roots), 15, what=f"{attempt_dir} to be removed")


@pytest.fixture
def unprivileged(tmp_path):
    """A server run by `nobody`, in a home of its own outside root's private temporary folders."""
    home = Path(tempfile.mkdtemp(prefix="shoal-nobody-", dir="/tmp"))
    shutil.chown(home, "nobody", "nogroup")
    instance = Shoal(home)
    log = open(tmp_path / "server.out", "ab")
    instance.server = subprocess.Popen(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", SHOAL, "server", "--home", str(home),
         "--port", "0"], env=dict(instance.env, HOME=str(home)), stdout=log, stderr=log, start_new_session=True)
    wait_for(lambda: (home / "server.json").exists(), 10, what="the server to start")
    yield instance, tmp_path / "server.out"
    instance.run("server", "--stop", "--home", str(home))
    instance.stop_server()
    for pid in processes_with_env(f"SHOAL_HOME={home}"):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(home, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to become another user")
def test_a_server_that_cannot_make_cgroups_says_limits_are_not_enforced(unprivileged, tmp_path):
    # An ordinary user with nothing delegated: the server runs tasks unlimited, and says so.
    shoal, output = unprivileged
    limits = shoal.get_json("/api/v1/cluster")["task_limits"]
    assert limits["enforced"] is False, limits
    assert re.fullmatch(r"task limits are not enforced: .*Permission denied; fix: run the server as root, or in a "
                        r"cgroup delegated to its user \(systemd's Delegate=yes\)", limits["detail"]), limits
    said = output.read_text()
    assert said.count("task limits are not enforced") == 1, said
    spec = write_spec(tmp_path, "name: free\nworkdir: /tmp\nroles: {worker: {cpus: 0.1, memory: 16M, command: 'sleep 30'}}\n")
    job_id = shoal.submit(spec)
    shoal.wait_state(job_id, "RUNNING", 30)
    assert "  limits: " + limits["detail"] in shoal.run("status", job_id, check=0).stdout
    assert shoal.status(job_id)["limits_not_enforced"] == limits["detail"]
    shoal.run("kill", job_id, check=0)
