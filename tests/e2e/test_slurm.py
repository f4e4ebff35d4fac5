"""The Slurm backend on a real Slurm cluster: scripts/slurm-up.sh starts slurmctld and two
slurmd, each in its own network namespace with its own address and hostname (node1 at
10.253.0.11, node2 at 10.253.0.12, 4 CPUs, 4000 MB and 2 fake GPUs each). The Shoal server
runs here and listens on the bridge (10.253.0.1), where the nodes reach it."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, wait_for, write_spec

pytestmark = pytest.mark.slow
BRIDGE = "10.253.0.1"
NODE_ADDRS = {"node1": "10.253.0.11", "node2": "10.253.0.12"}
SLURM_DAEMONS = {"slurmctld", "slurmd", "slurmstepd"}


def slurm(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60, env=dict(os.environ)).stdout


def slurm_processes():
    """Pids of Slurm's live daemons and steps on this machine, by their command name."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                name, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
                if name in SLURM_DAEMONS and state != "Z":
                    found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


@pytest.fixture(scope="session")
def slurm_cluster():
    if os.geteuid() != 0 or not shutil.which("slurmctld"):
        pytest.skip("needs root and Slurm (scripts/install-deps.sh installs slurm-wlm and munge)")
    up = subprocess.run([str(REPO / "scripts/slurm-up.sh")], capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stderr
    yield
    down = subprocess.run([str(REPO / "scripts/slurm-down.sh")], capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stderr
    wait_for(lambda: not slurm_processes(), 10, what=f"no Slurm process to be left: {slurm_processes()}")


@pytest.fixture
def on_slurm(shoal, slurm_cluster, request):
    """A Shoal server whose jobs run on the Slurm cluster; a test marked
    @pytest.mark.server_args(...) starts it with those flags too."""
    marker = request.node.get_closest_marker("server_args")
    shoal.start_server("--cluster", "slurm", "--host", BRIDGE, *(marker.args if marker else ()))
    yield shoal
    # Nothing of this test's jobs may be left in Slurm; what is, is cancelled so the next
    # test starts on an empty cluster.
    try:
        wait_for(lambda: not slurm("squeue", "-h").strip(), 20, what="Slurm's queue to empty")
    finally:
        left = slurm("squeue", "-h", "-o", "%i %j %T")
        if left.strip():
            slurm("scancel", *[line.split()[0] for line in left.splitlines() if line.strip()])
            wait_for(lambda: not slurm("squeue", "-h").strip(), 30, what="cancelled jobs to end")
    assert not left.strip(), f"jobs left in Slurm after the test:\n{left}"
    assert not slurm("squeue", "-h", "--steps").strip()
    shoal.stop_server()  # SIGTERM and reap here; `shoal server --stop` would wait on the unreaped child


def tasks_of(detail):
    return {(t["role"], t["index"]): t for t in detail["attempts"][-1]["tasks"]}


def test_job_runs_one_task_on_each_node_with_the_nodes_addresses(on_slurm, tmp_path):
    # 2500 MB per task: a node (4000 MB) holds one, so Slurm puts them on different nodes.
    spec = write_spec(tmp_path, """
name: two-nodes
cluster: slurm
roles:
  worker:
    instances: 2
    memory: 2500M
    command: 'echo "on $(hostname) SHOAL_HOST=$SHOAL_HOST"; echo "reporter progress:1.0" >&2'
""")
    on_slurm.run_job(spec, check=0)
    detail = on_slurm.status("job-1")
    assert detail["state"] == "SUCCEEDED"
    tasks = tasks_of(detail)
    hosts = sorted(t["host"] for t in tasks.values())
    assert hosts == sorted(NODE_ADDRS.values()), hosts
    for index in (0, 1):
        log = on_slurm.logs("job-1", index=index)
        match = re.search(r"on (node\d) SHOAL_HOST=(\S+)", log)
        assert match, log
        assert NODE_ADDRS[match.group(1)] == match.group(2) == tasks[("worker", index)]["host"]
    # The batch script Shoal wrote is a record of what it asked of Slurm.
    script = (on_slurm.home / "jobs/job-1/attempt-1/batch.sh").read_text()
    assert "--ntasks=2 --cpus-per-task=1 --mem-per-cpu=2500M" in script
    # An administrator tells whose job it is: a name unique to this server, and a comment.
    name = re.search(r"^#SBATCH --job-name=(shoal-[0-9a-f]{8}-job-1-1)$", script, re.M)
    assert name, script
    comment = f"shoal:user={os.environ.get('USER', 'root')},job=job-1,attempt=1,server=http://{BRIDGE}:"
    shown = slurm("scontrol", "show", "job")  # every job slurmctld still remembers
    assert f"JobName={name.group(1)}" in shown and f"Comment={comment}" in shown, shown


def test_fashion_mnist_ddp_trains_across_two_nodes(on_slurm):
    result, job = on_slurm.run_job(
        REPO / "examples/fashion-mnist-ddp/job.yaml", "--cluster", "slurm",
        "--command", "worker=/usr/bin/python3 train.py --epochs 1 --train-limit 2000 --test-limit 500",
        # Gloo must use the node's own interface inside its namespace (docs/slurm.md).
        "--env", "GLOO_SOCKET_IFNAME=eth0", check=0, timeout=300)
    detail = on_slurm.status(job)
    assert detail["state"] == "SUCCEEDED", on_slurm.log_tails()
    assert sorted(t["host"] for t in tasks_of(detail).values()) == sorted(NODE_ADDRS.values())
    assert "accuracy" in on_slurm.logs(job, index=0).lower()


# Two workers of one GPU each, saying which GPUs they see and where.
GPU_WORKERS = """  worker:
    instances: 2
    memory: 100M
    gpus: 1
    command: 'echo "gpu=[$CUDA_VISIBLE_DEVICES] on $(hostname)"'
"""


def test_gpu_tasks_see_the_gpus_slurm_assigned(on_slurm, tmp_path):
    # Two roles: two components of a heterogeneous job, which Slurm puts on different nodes.
    spec = write_spec(tmp_path, """
name: gpus
roles:
""" + GPU_WORKERS + """  ps:
    instances: 1
    memory: 100M
    # Not a service: a service that has not started when the workers end is never run,
    # and this task's output is what the test reads.
    service: false
    command: 'echo "gpu=[$CUDA_VISIBLE_DEVICES] on $(hostname)"'
""")
    on_slurm.run_job(spec, check=0, timeout=120)
    detail = on_slurm.status("job-1")
    seen = {}
    for (role, index), task in tasks_of(detail).items():
        match = re.search(r"gpu=\[(\S*)\] on (node\d)", on_slurm.logs("job-1", role=role, index=index))
        assert match, on_slurm.log_tails()
        seen[(role, index)] = (match.group(1), match.group(2))
        # What the task saw is what Slurm gave it, and what status shows.
        assert match.group(1) == ",".join(str(g) for g in task["gpus"])
    assert seen[("ps", 0)][0] == ""  # no GPU asked, none visible
    workers = [seen[("worker", i)] for i in range(2)]
    assert all(gpu in ("0", "1") for gpu, _ in workers), workers
    assert len(set(workers)) == 2, f"two tasks on one node got the same GPU: {workers}"


@pytest.mark.server_args("--slurm-partition", "shoal", "--slurm-option=--nodelist=node1")
def test_gpu_tasks_pinned_to_one_node_by_the_servers_slurm_flags_each_get_their_own_gpu(on_slurm, tmp_path):
    """With both tasks on one node, "no two tasks share a GPU" is a real check (spread over
    two nodes, each would see GPU 0). The server's --slurm-partition and --slurm-option go
    into every batch script, and Slurm honours them."""
    spec = write_spec(tmp_path, "name: pinned\nroles:\n" + GPU_WORKERS)
    on_slurm.run_job(spec, check=0, timeout=120)
    script = (on_slurm.home / "jobs/job-1/attempt-1/batch.sh").read_text()
    assert "#SBATCH --partition=shoal\n" in script and "#SBATCH --nodelist=node1\n" in script, script
    seen = []
    for (role, index), task in tasks_of(on_slurm.status("job-1")).items():
        match = re.search(r"gpu=\[(\S*)\] on (node\d)", on_slurm.logs("job-1", role=role, index=index))
        assert match, on_slurm.log_tails()
        assert match.group(1) == ",".join(str(g) for g in task["gpus"]), (match.group(0), task["gpus"])
        seen.append((match.group(1), match.group(2)))
    assert sorted(seen) == [("0", "node1"), ("1", "node1")], seen


def test_jobs_slurm_cannot_run_are_refused_at_submit(on_slurm, tmp_path):
    spec = write_spec(tmp_path, """
name: three-roles
roles:
  a: {command: 'true', memory: 100M}
  b: {command: 'true', memory: 100M}
  c: {command: 'true', memory: 100M}
""")
    result = on_slurm.run("submit", str(spec), check=2)
    assert "3 roles but the Slurm cluster has 2 usable node(s)" in result.stderr, result.stderr
    mpi_spec = write_spec(tmp_path, "name: mpi\nframework: mpi\nroles:\n  worker: {command: 'true'}\n", "mpi.yaml")
    mpi = on_slurm.run("submit", str(mpi_spec), check=2)
    assert "mpi jobs do not run on the Slurm backend" in mpi.stderr, mpi.stderr


def test_kill_leaves_no_step_running(on_slurm, tmp_path):
    spec = write_spec(tmp_path, """
name: sleeper
roles:
  worker:
    instances: 2
    memory: 2500M
    command: 'echo "started on $(hostname)"; sleep 600'
""")
    job = on_slurm.submit(spec)
    wait_for(lambda: (d := on_slurm.status(job))["attempts"] and len(
        [t for t in tasks_of(d).values() if t["state"] == "RUNNING"]) == 2, 60, what="both tasks to run")
    assert len(slurm("squeue", "-h", "--steps").splitlines()) >= 2
    # Each task's log reaches the server while the job runs, from whichever node it is on.
    for index in (0, 1):
        wait_for(lambda: "started on node" in on_slurm.logs(job, index=index), 15, what=f"worker[{index}]'s log")
    on_slurm.run("kill", job, check=0)
    on_slurm.wait_state(job, "KILLED", timeout=60)
    assert not slurm("squeue", "-h", "--steps").strip()
    wait_for(lambda: not on_slurm.job_processes(job), 15, what="the job's processes to end")


def test_a_job_larger_than_the_cluster_is_refused(on_slurm, tmp_path):
    spec = write_spec(tmp_path, """
name: too-big
roles:
  worker:
    instances: 3
    cpus: 4
    command: 'true'
""")
    result = on_slurm.run("submit", str(spec), check=2)
    assert "more than the whole cluster has (8 CPUs" in result.stderr, result.stderr
    too_many_gpus = on_slurm.run("submit", str(spec), "--instances", "worker=1", "--cpus", "worker=1",
                                 "--gpus", "worker=3", check=2)
    assert "3 GPUs but the largest node has 2" in too_many_gpus.stderr, too_many_gpus.stderr
    assert not slurm("squeue", "-h").strip()  # nothing reached Slurm


def test_a_waiting_job_shows_slurms_reason(on_slurm, tmp_path):
    blocker = slurm("sbatch", "--parsable", "-N2", "--exclusive", "-o", "/dev/null", "--wrap", "sleep 120").strip()
    try:
        spec = write_spec(tmp_path, "name: waits\nroles:\n  worker:\n    command: 'true'\n")
        job = on_slurm.submit(spec)
        detail = wait_for(lambda: (d := on_slurm.status(job)) and "waiting for Slurm" in d.get("message", "") and d,
                          30, what="Slurm's reason in the status")
        assert "PENDING" in detail["message"], detail["message"]
        text = on_slurm.run("status", job, check=0).stdout
        assert "waiting for Slurm" in text
    finally:
        slurm("scancel", blocker)
    on_slurm.wait_state(job, "SUCCEEDED", timeout=60)


def test_node_failure_fails_the_attempt_naming_the_node_and_the_retry_succeeds(on_slurm, tmp_path):
    spec = write_spec(tmp_path, """
name: survives
max_attempts: 2
timeouts:
  heartbeat: 60s
roles:
  worker:
    instances: 2
    memory: 2500M
    command: 'if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 600; fi; echo done on $(hostname)'
""")
    job = on_slurm.submit(spec)
    detail = wait_for(lambda: (d := on_slurm.status(job))["attempts"] and len(
        [t for t in tasks_of(d).values() if t["state"] == "RUNNING"]) == 2 and d, 60, what="both tasks to run")
    am_host = detail["attempts"][-1]["am_addr"].split(":")[0]
    victim = next(n for n, addr in NODE_ADDRS.items() if addr != am_host)
    number = victim.removeprefix("node")
    subprocess.run([str(REPO / "scripts/slurm-node.sh"), "stop", number], check=True, timeout=30)
    try:
        wait_for(lambda: len(on_slurm.status(job)["attempts"]) == 2, 90, interval=0.5,
                 what="the node failure to end attempt 1")
        first = on_slurm.status(job)["attempts"][0]
        assert first["state"] == "FAILED"
        assert f"node {victim} failed" in first["message"] and "NODE_FAIL" in first["message"], first
        on_victim = [t for t in first["tasks"] if t["host"] == NODE_ADDRS[victim]]
        assert on_victim and all(t["message"].startswith(f"its node failed: node {victim} failed") for t in on_victim), first
    finally:
        subprocess.run([str(REPO / "scripts/slurm-node.sh"), "start", number], check=True, timeout=30)
    detail = on_slurm.wait_state(job, "SUCCEEDED", timeout=120)
    assert len(detail["attempts"]) == 2
    # The restarted slurmd ends what its node still ran of the failed attempt.
    wait_for(lambda: not on_slurm.job_processes(job), 60, what="attempt 1's leftovers on the failed node to end")


def test_a_scancel_from_outside_shoal_fails_the_attempt_saying_so_and_the_retry_succeeds(on_slurm, tmp_path):
    spec = write_spec(tmp_path, """
name: cancelled
max_attempts: 2
roles:
  worker:
    memory: 100M
    command: 'if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 600; fi; echo done'
""")
    job = on_slurm.submit(spec)
    wait_for(lambda: (d := on_slurm.status(job))["attempts"] and
             tasks_of(d).get(("worker", 0), {}).get("state") == "RUNNING", 60, what="attempt 1 to run")
    listed = slurm("squeue", "-h", "-o", "%i %j")
    slurm_id = next(line.split()[0] for line in listed.splitlines() if line.split()[1].endswith(f"-{job}-1"))
    slurm("scancel", slurm_id)  # an administrator, not Shoal
    detail = on_slurm.wait_state(job, ("SUCCEEDED", "FAILED", "KILLED"), timeout=120)
    assert detail["state"] == "SUCCEEDED" and len(detail["attempts"]) == 2, detail
    first = detail["attempts"][0]
    assert first["state"] == "FAILED", first
    assert first["message"] == "the Slurm job was cancelled outside Shoal (CANCELLED)", first
    assert "killed by the user" not in json.dumps(first)
    # The AM itself took Slurm's SIGTERM for what it was, not for a user's kill.
    am_log = (on_slurm.home / "jobs" / job / "attempt-1" / "am.log").read_text()
    assert "killed by the user" not in am_log and "Slurm is ending this attempt" in am_log, am_log


def test_the_cluster_view_lists_each_node_and_why_one_is_drained(on_slurm):
    nodes = {n["name"]: n for n in on_slurm.get_json("/api/v1/cluster")["nodes"]}
    assert sorted(nodes) == ["node1", "node2"], nodes
    assert nodes["node1"]["capacity"] == {"cpus": 4, "memory_bytes": 4000 << 20, "gpus": 2}, nodes["node1"]
    assert nodes["node1"]["allocated"]["cpus"] == 0 and nodes["node1"]["reason"] == ""
    slurm("scontrol", "update", "nodename=node2", "state=drain", "reason=disk replaced")
    try:
        def drained():
            node = next(n for n in on_slurm.get_json("/api/v1/cluster")["nodes"] if n["name"] == "node2")
            return "drain" in node["state"] and node
        node = wait_for(drained, 10, what="node2 to show drained")
        assert node["reason"] == "disk replaced", node
    finally:
        slurm("scontrol", "update", "nodename=node2", "state=resume")


# A program that checkpoints on SIGTERM: it must be told before it is stopped.
TRAPS_TERM = "trap 'echo TERM > {marker}.$SHOAL_INDEX; exit 0' TERM; echo ready; sleep 600 & wait"


def test_a_killed_jobs_program_gets_sigterm_and_exits_cleanly(on_slurm, tmp_path):
    marker = tmp_path / "got"
    spec = write_spec(tmp_path, f"""
name: told
cluster: slurm
roles:
  worker: {{memory: 100M, command: {json.dumps(TRAPS_TERM.format(marker=marker))}}}
""")
    job = on_slurm.submit(spec)
    wait_for(lambda: "ready" in on_slurm.logs(job), 60, what="the program to start")
    on_slurm.run("kill", job, check=0)
    detail = on_slurm.wait_state(job, ("KILLED", "FAILED", "SUCCEEDED"), timeout=60)
    assert detail["state"] == "KILLED", detail
    assert (tmp_path / "got.0").read_text() == "TERM\n", on_slurm.log_tails()


def test_a_peers_failure_gives_the_others_sigterm_first(on_slurm, tmp_path):
    marker = tmp_path / "got"
    command = ('if [ "$SHOAL_INDEX" = 1 ]; then sleep 2; echo broken >&2; exit 3; fi; ' + TRAPS_TERM.format(marker=marker))
    spec = write_spec(tmp_path, f"""
name: peer-fails
cluster: slurm
roles:
  worker: {{instances: 2, memory: 100M, command: {json.dumps(command)}}}
""")
    result, job = on_slurm.run_job(spec, check=1)
    detail = on_slurm.status(job)
    tasks = tasks_of(detail)
    assert tasks[("worker", 1)]["state"] == "FAILED", tasks
    assert (tmp_path / "got.0").read_text() == "TERM\n", on_slurm.log_tails()
    assert tasks[("worker", 0)]["exit_code"] == 0, tasks[("worker", 0)]



def test_a_roles_tasks_share_one_step_and_one_killed_agent_is_known_at_once(on_slurm, tmp_path):
    """The agents of a role's tasks run as one srun step, as a plain `srun --ntasks=2` does;
    when one agent is killed, srun's own words say so at once (not the heartbeat timeout),
    the other task's program gets SIGTERM first, and no program is left."""
    marker = tmp_path / "got"
    spec = write_spec(tmp_path, f"""
name: shared-step
cluster: slurm
max_attempts: 1
roles:
  worker: {{instances: 2, memory: 100M, command: {json.dumps(TRAPS_TERM.format(marker=marker))}}}
""")
    job = on_slurm.submit(spec)
    wait_for(lambda: all("ready" in on_slurm.logs(job, index=i) for i in (0, 1)), 60, what="both programs to start")
    steps = [line.split() for line in slurm("squeue", "-h", "--steps", "-o", "%i %j").splitlines()]
    assert [name for _, name in steps if name.startswith("shoal-")] == ["shoal-worker"], steps
    program = tasks_of(on_slurm.status(job))[("worker", 1)]["pid"]
    agent = parent_of(program)
    command_line = (Path("/proc") / str(agent) / "cmdline").read_bytes().split(b"\0")
    assert b"container" in command_line and b"--index-from-env" in command_line, command_line
    os.kill(agent, signal.SIGKILL)
    detail = on_slurm.wait_state(job, ("FAILED", "SUCCEEDED", "KILLED"), timeout=60)
    assert detail["state"] == "FAILED", detail
    killed = tasks_of(detail)[("worker", 1)]
    assert "the container ended before its task did (killed by signal 9" in killed["message"], killed
    assert (tmp_path / "got.0").read_text() == "TERM\n", on_slurm.log_tails()
    wait_for(lambda: not command_lines_with(str(marker)), 30, what=f"no program left: {command_lines_with(str(marker))}")


# Reads every ancestor's environment it may read and prints each Shoal token variable
# that still has a value there.
SHOWS_TOKENS = r"""/usr/bin/python3 -c '
import os
pid, seen = os.getpid(), []
while pid > 1:
    try:
        entries = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        seen += [e.decode() for e in entries if e.startswith(b"SHOAL_TASK_TOKEN") and e.split(b"=", 1)[1].strip(b"\0")]
    except OSError:
        pass
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
print("tokens seen:", len(seen), seen)
'"""


def test_no_program_finds_a_task_token_in_its_agents_memory(on_slurm, tmp_path):
    spec = write_spec(tmp_path, f"""
name: tokens
cluster: slurm
roles:
  worker: {{instances: 2, memory: 100M, command: {json.dumps(SHOWS_TOKENS)}}}
""")
    _, job = on_slurm.run_job(spec, check=0)
    for index in (0, 1):
        log = on_slurm.logs(job, index=index)
        assert "tokens seen: 0 []" in log, log


IDENTITY_JOBS = "/tmp/shoal-slurm-identity-jobs"


@pytest.mark.server_args("--jobs-dir", IDENTITY_JOBS)
def test_a_root_server_submits_each_job_as_its_owners_account(on_slurm, unix_accounts):
    """Slurm itself runs the job as the owner's account: its user in squeue, the AM and
    the program as that uid, the attempt's folder that account's."""
    work = Path(IDENTITY_JOBS).parent / "shoal-slurm-identity-work"
    work.mkdir(mode=0o755, exist_ok=True)
    ann = on_slurm.run("user", "add", "ann", "--unix-user", "shoal-ann", check=0).stdout.strip()
    spec = write_spec(work, """
name: as-ann
roles:
  worker:
    memory: 256M
    command: echo "program runs as $(id -un)"; sleep 2
""", name="ann.yaml")
    job_id = on_slurm.run("submit", str(spec), env=dict(on_slurm.env, SHOAL_TOKEN=ann), check=0).stdout.strip()
    on_slurm.wait_state(job_id, "RUNNING", timeout=60)
    wait_for(lambda: "shoal-ann" in slurm("squeue", "-h", "-o", "%u"), 30, what="Slurm to show the job as shoal-ann's")
    on_slurm.wait_state(job_id, "SUCCEEDED", timeout=60)
    assert "program runs as shoal-ann" in on_slurm.logs(job_id)
    # Slurm's accounting (slurmdbd) keeps the job as the administrator reads it later: whose
    # account ran it, Shoal's unique name, and the comment naming the Shoal user and server.
    name = re.search(r"^#SBATCH --job-name=(\S+)$", (Path(IDENTITY_JOBS) / job_id / "attempt-1" / "batch.sh").read_text(),
                     re.M).group(1)
    assert re.fullmatch(r"shoal-[0-9a-f]{8}-" + job_id + "-1", name), name

    def accounted():
        rows = [line.split("|") for line in slurm("sacct", "-X", "-n", "-P", "--name", name,
                                                  "-o", "JobName,User,State,Comment").splitlines()]
        return rows[0] if len(rows) == 1 and rows[0][2] == "COMPLETED" else None
    job_name, user, _, comment = wait_for(accounted, 30, what=f"sacct to record {name} as COMPLETED")
    assert (job_name, user) == (name, "shoal-ann")
    assert comment.startswith(f"shoal:user=ann,job={job_id},attempt=1,server=http://{BRIDGE}:"), comment
    attempt = Path(IDENTITY_JOBS) / job_id / "attempt-1"
    assert attempt.stat().st_uid == unix_accounts["shoal-ann"].pw_uid
    assert oct(attempt.parent.stat().st_mode)[-3:] == "700"
    shutil.rmtree(IDENTITY_JOBS, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.server_args("--slurm-option=--nice=5", "--slurm-lock", "account")
def test_a_jobs_own_slurm_options_reach_sbatch_and_slurm_refuses_bad_ones(on_slurm, tmp_path):
    """The spec's slurm: section: its options override the server's defaults, Slurm's own
    refusal comes back at submit in Slurm's words, and a locked field is refused."""
    spec = write_spec(tmp_path, """
name: own-options
slurm:
  partition: shoal
  time: 5m
  extra: [--nice=10]
roles:
  worker:
    memory: 256M
    command: sleep 30
""")
    job_id = on_slurm.submit(spec)
    on_slurm.wait_state(job_id, "RUNNING", timeout=60)
    # RUNNING once admitted; the script is written after sbatch --test-only checked the options.
    script_path = on_slurm.home / "jobs" / job_id / "attempt-1" / "batch.sh"
    wait_for(script_path.exists, 30, what="the attempt's batch script")
    script = script_path.read_text()
    name = re.search(r"^#SBATCH --job-name=(\S+)$", script, re.M).group(1)
    slurm_id = wait_for(lambda: slurm("squeue", "-h", "-o", "%i", "--name", name).strip(), 30, what="the Slurm job")
    shown = slurm("scontrol", "show", "job", slurm_id)
    assert "TimeLimit=00:05:00" in shown and "Nice=10" in shown, shown
    assert "#SBATCH --nice=10" in script and "--nice=5" not in script, script
    on_slurm.run("kill", job_id, check=0)
    on_slurm.wait_state(job_id, "KILLED", timeout=60)

    refused = on_slurm.run("submit", str(spec), "--slurm-partition", "nosuch")
    assert refused.returncode == 2, refused.stderr
    assert "slurm: Slurm refused the job's options (slurm.partition" in refused.stderr, refused.stderr
    assert "invalid partition" in refused.stderr.lower(), refused.stderr
    locked = on_slurm.run("submit", str(spec), "--slurm-account", "ml")
    assert locked.returncode == 2 and "slurm.account: this server's administrator keeps" in locked.stderr, locked.stderr
    bad = on_slurm.run("submit", str(spec), "--slurm-extra=--output=/tmp/x")
    assert bad.returncode == 2 and "--output is Shoal's to set" in bad.stderr, bad.stderr
    assert [j["id"] for j in json.loads(on_slurm.run("list", "--json", check=0).stdout)["jobs"]] == [job_id]


def test_a_program_is_warned_before_slurms_time_limit(on_slurm, tmp_path):
    """Shoal asks Slurm for a warning before the job's time limit (--signal=B:USR1@90, to
    the AM alone): the AM stops its task with SIGTERM, the program's trap runs, and the
    attempt fails naming the limit, well before Slurm's TIMEOUT."""
    spec = write_spec(tmp_path, """
name: near-the-limit
slurm: {time: 2m}
roles:
  worker:
    memory: 256M
    command: >-
      trap 'echo "got TERM, saving"; exit 0' TERM; echo started;
      while true; do sleep 0.2; done
""")
    job_id = on_slurm.submit(spec)
    script = wait_for(lambda: (path := on_slurm.home / "jobs" / job_id / "attempt-1" / "batch.sh").exists()
                      and path.read_text(), 30, what="the batch script")
    assert "#SBATCH --time=2" in script and "#SBATCH --signal=B:USR1@90" in script, script
    final = on_slurm.wait_state(job_id, "FAILED", timeout=100)
    assert "Slurm's time limit for this attempt is near" in final["message"], final
    log = on_slurm.logs(job_id)
    assert "started" in log and "got TERM, saving" in log, log
    assert "TIMEOUT" not in json.dumps(final), "stopped by Shoal before Slurm's limit"


class Freezer:
    """A cgroup freezer group (v1, else v2): a process in it is hung as in the kernel, which
    Slurm's SIGCONT does not wake, unlike SIGSTOP."""

    def __init__(self, name):
        v1 = Path("/sys/fs/cgroup/freezer")
        self.v1 = v1.is_dir()
        self.group = (v1 if self.v1 else Path("/sys/fs/cgroup")) / name

    def freeze(self, pid):
        self.group.mkdir(exist_ok=True)
        (self.group / "cgroup.procs").write_text(str(pid))
        if self.v1:
            (self.group / "freezer.state").write_text("FROZEN")
        else:
            (self.group / "cgroup.freeze").write_text("1")

    def thaw_and_remove(self):
        if not self.group.exists():
            return
        if self.v1:
            (self.group / "freezer.state").write_text("THAWED")
        else:
            (self.group / "cgroup.freeze").write_text("0")
        wait_for(lambda: not (self.group / "cgroup.procs").read_text().strip(), 30, what="the thawed AM to end")
        self.group.rmdir()


def test_slurms_own_time_limit_fails_the_attempt_saying_so_and_it_is_retried(on_slurm, tmp_path):
    """When the AM hangs and cannot act on Shoal's warning, Slurm's own limit ends the
    attempt: TIMEOUT, with docs/slurm.md's sentence, never "killed by the user" nor what the
    AM said, and the job goes on to its next attempt."""
    spec = write_spec(tmp_path, """
name: past-the-limit
max_attempts: 2
slurm: {time: 1m}
roles:
  worker: {memory: 100M, command: 'sleep 600'}
""")
    job = on_slurm.submit(spec)

    def am():
        found = [pid for pid, line in command_lines_with(f"--job {job} ") if " am " in line and "srun" not in line
                 and str(on_slurm.home) in line]
        return found[0] if found else None

    freezer = Freezer(f"shoal-test-hung-am-{os.getpid()}")
    try:
        # Hung before Slurm's warning, which comes at slurmctld's first periodic check (every 30 s).
        freezer.freeze(wait_for(am, 60, interval=0.005, what="attempt 1's AM"))
        slurm_id = wait_for(lambda: (d := on_slurm.status(job))["attempts"] and d["attempts"][0]["backend_id"], 30,
                            what="the Slurm job id")
        # While Slurm ends it the job shows COMPLETING, with the limit as its reason.
        wait_for(lambda: re.search(r"JobState=(TIMEOUT|COMPLETING) Reason=TimeLimit",
                                   slurm("scontrol", "show", "job", slurm_id)), 150,
                 what="Slurm's time limit to end the job")
        time.sleep(7)  # KillWait (5 s): Slurm's SIGKILL is what the AM meets when it wakes
    finally:
        freezer.thaw_and_remove()
    detail = wait_for(lambda: (d := on_slurm.status(job)) and len(d["attempts"]) == 2 and d, 60,
                      what="attempt 1 to end and attempt 2 to start")
    first = detail["attempts"][0]
    assert first["state"] == "FAILED", first
    assert first["message"] == "the attempt reached its Slurm time limit (TIMEOUT)", first
    assert "killed by the user" not in json.dumps(first)
    on_slurm.run("kill", job, check=0)
    on_slurm.wait_state(job, ("KILLED", "FAILED", "SUCCEEDED"), timeout=60)


def test_slurms_preemption_requeues_the_job_which_resumes_from_its_checkpoint(on_slurm, tmp_path):
    """A job of a higher-tier partition (the test cluster's hidden `urgent`) preempts the
    Shoal job (PreemptMode=REQUEUE, GraceTime=10; Shoal submits with --no-requeue, so Slurm
    ends the job rather than requeue it under the same id): the program's TERM trap writes a
    checkpoint and marks it; attempt 1 ends PREEMPTED (Slurm's preempt time says so, though
    the AM ended in the grace), not counted against max_attempts: 1, and attempt 2, on
    whichever node, starts from the checkpoint Shoal uploaded to the shared file system. The
    agent and the AM ask Slurm (scontrol's PreemptTime) whether their SIGTERM was a
    preemption, so the program finds the preemption file, as on the local cluster."""
    spec = write_spec(tmp_path, f"""
name: preemptible
max_attempts: 1
checkpoint: {{uri: {tmp_path}/ckpt}}
roles:
  worker:
    cpus: 4
    memory: 256M
    command: >-
      if [ -e "$SHOAL_CHECKPOINT_DIR/state" ]; then echo "resumed from $(cat $SHOAL_CHECKPOINT_DIR/state)"; exit 0; fi;
      trap 'echo "got TERM, saving"; echo step-42 > $SHOAL_CHECKPOINT_DIR/state; touch $SHOAL_CHECKPOINT_MARKER;
      sleep 1; cat $SHOAL_PREEMPTION_FILE; exit 0' TERM;
      echo started; while true; do sleep 0.2; done
""")
    job = on_slurm.submit(spec)
    detail = wait_for(lambda: (d := on_slurm.status(job))["attempts"] and
                      tasks_of(d).get(("worker", 0), {}).get("state") == "RUNNING" and d, 60, what="attempt 1 to run")
    wait_for(lambda: "started" in on_slurm.logs(job), 30, what="the program to start")
    host = tasks_of(detail)[("worker", 0)]["host"]
    node = next(name for name, addr in NODE_ADDRS.items() if addr == host)
    urgent = subprocess.run(["sbatch", "--parsable", "--partition=urgent", f"--nodelist={node}", "--cpus-per-task=4",
                             "--mem=64", "--output=/dev/null", "--wrap", "sleep 3"], capture_output=True, text=True, timeout=30)
    assert urgent.returncode == 0, urgent.stderr
    final = on_slurm.wait_state(job, ("SUCCEEDED", "FAILED", "KILLED"), timeout=120)
    assert final["state"] == "SUCCEEDED" and len(final["attempts"]) == 2, final
    first = final["attempts"][0]
    assert first["state"] == "PREEMPTED", first
    assert "Slurm preempted the attempt for another job" in first["message"], first
    assert "killed by the user" not in json.dumps(first), first
    first_log = on_slurm.logs(job, attempt=1)
    assert "got TERM, saving" in first_log and "==== shoal: checkpoint round 1 uploaded" in first_log, first_log
    # The agent asked Slurm whether its SIGTERM was a preemption, and told the program so.
    assert "SHOAL_PREEMPTED=1" in first_log and "Slurm preempted the job for another job" in first_log, first_log
    assert "resumed from step-42" in on_slurm.logs(job, attempt=2)
    wait_for(lambda: not slurm("squeue", "-h").strip(), 30, what="the urgent job to end")


def test_a_queue_maps_to_a_slurm_partition_and_a_low_priority_to_a_nice_value(shoal, slurm_cluster, tmp_path):
    (shoal.home / "queues.yaml").write_text("queues:\n  rush: {guarantee: 50%, slurm: {partition: urgent}}\n")
    shoal.start_server("--cluster", "slurm", "--host", BRIDGE)
    try:
        spec = write_spec(tmp_path, "roles: {worker: {command: 'echo ran', memory: 64M}}\n")
        job = shoal.submit(spec, "--queue", "rush", "--priority", "low")
        shoal.wait_state(job, "SUCCEEDED", timeout=60)
        script = (shoal.home / "jobs" / job / "attempt-1" / "batch.sh").read_text()
        assert "#SBATCH --partition=urgent" in script and "#SBATCH --nice=100" in script, script
        # The job's own slurm: section wins over its queue's.
        own = shoal.submit(spec, "--queue", "rush", "--slurm-partition", "shoal")
        shoal.wait_state(own, "SUCCEEDED", timeout=60)
        script = (shoal.home / "jobs" / own / "attempt-1" / "batch.sh").read_text()
        assert "#SBATCH --partition=shoal" in script and "urgent" not in script, script
    finally:
        shoal.stop_server()


def command_lines_with(needle: str):
    """(pid, command line) of every process on the machine (every node's) whose command
    line holds `needle`, as the chaos suite looks for leftovers."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in line and int(entry.name) != os.getpid():
            found.append((int(entry.name), line))
    return found


def parent_of(pid: int) -> int:
    return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])


def start_hidden_programs(on_slurm, tmp_path, instances):
    """Submits a job whose `instances` programs are grandchildren of their agents (`sh -c`
    without exec) and drop the job's environment markers (env -i), so only their command
    line finds them. Returns (job id, that command line's marker, the programs' pids)."""
    needle = f"orphan-probe-{tmp_path.name}"
    spec = write_spec(tmp_path, f"""
name: hidden-programs
max_attempts: 1
roles:
  worker:
    instances: {instances}
    memory: 100M
    command: 'env -i /usr/bin/python3 -c "import time; time.sleep(600)" {needle}; echo never'
""")
    job = on_slurm.submit(spec)

    def programs():
        found = [pid for pid, line in command_lines_with(needle) if line.startswith("/usr/bin/python3")]
        return found if len(found) == instances else None

    return job, needle, wait_for(programs, 60, what=f"{instances} program(s) to run")


def assert_programs_end_and_the_job_fails(on_slurm, job, needle, what):
    wait_for(lambda: not command_lines_with(needle), 60, what=f"the programs to end with {what}: {command_lines_with(needle)}")
    detail = on_slurm.wait_state(job, ("FAILED", "SUCCEEDED", "KILLED"), timeout=120)
    assert detail["state"] == "FAILED", detail


def test_a_killed_agents_program_does_not_outlive_it(on_slurm, tmp_path):
    job, needle, (program,) = start_hidden_programs(on_slurm, tmp_path, 1)
    agent = parent_of(parent_of(program))
    assert "container" in (Path("/proc") / str(agent) / "cmdline").read_text(), "the agent is the program's grandparent"
    os.kill(agent, signal.SIGKILL)
    assert_programs_end_and_the_job_fails(on_slurm, job, needle, "its agent")


def test_a_killed_ams_programs_do_not_outlive_its_job(on_slurm, tmp_path):
    job, needle, _ = start_hidden_programs(on_slurm, tmp_path, 2)
    ams = [pid for pid, line in command_lines_with(f"--job {job} ") if " am " in line and "srun" not in line
           and str(on_slurm.home) in line]
    assert len(ams) == 1, command_lines_with(f"--job {job} ")
    os.kill(ams[0], signal.SIGKILL)
    assert_programs_end_and_the_job_fails(on_slurm, job, needle, "the AM")


def test_roles_run_in_their_images_on_the_slurm_nodes(on_slurm, tmp_path):
    # The same agent runs the containers on each node, from the root the server extracted
    # into the jobs folder every node reaches; host networking is the node's own namespace.
    subprocess.run(["bash", str(REPO / "scripts/build-test-images.sh")], check=True, timeout=1200)
    spec = write_spec(tmp_path, """
name: images-on-slurm
roles:
  worker: {memory: 256M, image: localhost/shoal-test-numpy:1,
           command: "/usr/bin/python3 -c 'import numpy, socket; print(\\"numpy\\", numpy.__version__, \\"on\\", socket.gethostname())'"}
  evaluator: {memory: 256M, image: localhost/shoal-test-base:1,
              command: "/usr/bin/python3 -c 'import socket; print(\\"plain on\\", socket.gethostname())'; ! /usr/bin/python3 -c 'import numpy'"}
""")
    result, job = on_slurm.run_job(spec, "--cluster", "slurm", check=0, timeout=300)
    detail = on_slurm.status(job)
    assert detail["state"] == "SUCCEEDED", on_slurm.log_tails()
    worker, evaluator = on_slurm.logs(job, role="worker"), on_slurm.logs(job, role="evaluator")
    assert re.search(r"numpy 1\.\d+\.\d+ on node[12]", worker), worker
    assert re.search(r"plain on node[12]", evaluator), evaluator
