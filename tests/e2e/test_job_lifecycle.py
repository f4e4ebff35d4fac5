"""The job lifecycle end to end on the embedded local cluster, with real processes."""
import json
import os
import re
import select
import signal
import subprocess
import time

import pytest

from conftest import REPO, SHOAL, processes_with_command, wait_for, write_spec

pytestmark = pytest.mark.slow

# A task command that waits until the test creates the file "release" in its working
# directory: the test decides when the task ends, instead of guessing with a sleep.
WAIT_FOR_RELEASE = "while [ ! -e {path} ]; do sleep 0.05; done"


def scheduler_passes(shoal):
    """The server's completed scheduler passes (shoal_scheduler_passes_total on /metrics)."""
    import urllib.request
    url = json.loads((shoal.home / "server.json").read_text())["url"]
    with urllib.request.urlopen(url + "/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return int(float(re.search(r"^shoal_scheduler_passes_total (\S+)$", text, re.M).group(1)))


def test_fashion_mnist_ddp_on_two_workers(shoal, tmp_path):
    shoal.start_server()
    result, job_id = shoal.run_job(
        REPO / "examples/fashion-mnist-ddp/job.yaml",
        "--command", "worker=/usr/bin/python3 train.py --epochs 1 --train-limit 1500 --test-limit 300", check=0)
    assert "SUCCEEDED" in result.stderr
    # The final loss is all-reduced before it is printed, so equal losses prove nothing;
    # each rank evaluates its own copy of the model, so equal test accuracies show that
    # DDP kept the replicas identical while each trained on its own shard.
    accuracies = []
    for index in (0, 1):
        log = shoal.logs(job_id, index=index)
        assert re.search(r"final loss: [0-9.]+", log), log
        match = re.search(r"test accuracy: ([0-9.]+)%", log)
        assert match, log
        accuracies.append(match.group(1))
        assert f"[rank {index}] world size 2," in log, log
    assert accuracies[0] == accuracies[1], f"the ranks' models differ: {accuracies}"
    detail = shoal.status(job_id)
    assert [t["progress"] for t in detail["attempts"][-1]["tasks"]] == [1.0, 1.0]


def test_a_failing_worker_fails_the_job_and_is_named(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: fails
roles:
  worker:
    instances: 3
    cpus: 0.5
    memory: 64M
    command: if [ "$SHOAL_INDEX" = 1 ]; then echo "bad things" >&2; exit 1; fi; sleep 60
""")
    result, job_id = shoal.run_job(spec, check=1, timeout=60)
    assert "FAILED" in result.stderr
    assert "worker[1] failed: exit code 1: bad things" in result.stderr
    tasks = {t["index"]: t for t in shoal.status(job_id)["attempts"][-1]["tasks"]}
    assert tasks[1]["state"] == "FAILED" and tasks[1]["exit_code"] == 1
    assert tasks[0]["state"] == "KILLED" and tasks[2]["state"] == "KILLED"
    assert shoal.job_processes(job_id) == []


def test_peers_stopped_after_a_failure_finish_their_output_within_the_grace(shoal, tmp_path):
    shoal.start_server()
    # worker[0] runs under /bin/sh, which dies of the SIGTERM at once; the Python program
    # under it handles the signal and prints for a second, as a traceback would.
    (tmp_path / "peer.py").write_text("""
import os, signal, sys, time
if os.environ["SHOAL_INDEX"] == "1":
    time.sleep(1)
    sys.exit(1)
def stopped(signum, frame):
    for i in range(10):
        print(f"last words {i}", flush=True)
        time.sleep(0.1)
    sys.exit(3)
signal.signal(signal.SIGTERM, stopped)
time.sleep(60)
""")
    spec = write_spec(tmp_path, """
name: peers
roles:
  worker: {instances: 2, cpus: 0.5, memory: 64M, command: /usr/bin/python3 peer.py}
""")
    result, job_id = shoal.run_job(spec, check=1, timeout=60)
    assert "worker[1] failed" in result.stderr, result.stderr
    assert "last words 9" in shoal.logs(job_id, index=0), shoal.log_tails()
    assert shoal.job_processes(job_id) == []


def test_status_shows_the_programs_pid_not_its_shells(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, "name: pid\nroles: {worker: {cpus: 0.5, memory: 64M, command: sleep 30}}\n")
    job_id = shoal.submit(spec)
    task = wait_for(lambda: [t for t in shoal.status(job_id)["attempts"][-1]["tasks"] if t.get("pid")] if
                    shoal.status(job_id)["attempts"] else None, 30, what="the task's pid")[0]
    with open(f"/proc/{task['pid']}/cmdline", "rb") as f:
        assert f.read().split(b"\0")[0] == b"sleep", "the pid shown is the program's"
    assert str(task["pid"]) in shoal.run("status", job_id, check=0).stdout
    shoal.run("kill", job_id, check=0)
    assert shoal.job_processes(job_id) == []


def test_kill_leaves_no_process_behind(shoal, tmp_path):
    shoal.start_server()
    # Each task leaves a grandchild in the background, a process that escapes its group,
    # and one that also clears its environment (no marker finds it: its command line does).
    spec = write_spec(tmp_path, """
name: sleepy
roles:
  worker:
    instances: 2
    cpus: 0.5
    memory: 64M
    command: sleep 300 & setsid sleep 301 & setsid env -i sleep 3033 & echo "reporter progress:0.3" >&2; sleep 302
""")
    job_id = shoal.submit(spec)
    shoal.wait_state(job_id, "RUNNING")
    deadline = time.monotonic() + 10
    while len(shoal.job_processes(job_id)) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(shoal.job_processes(job_id)) >= 8, "the job's processes did not all start"
    result = shoal.run("kill", job_id, check=0, timeout=60)
    assert "KILLED" in result.stdout
    assert shoal.status(job_id)["state"] == "KILLED"
    assert shoal.job_processes(job_id) == []
    assert processes_with_command("sleep 3033") == [], "a process in a session of its own, without Shoal's variables"


def test_a_daemon_the_program_leaves_running_ends_with_its_task(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, "name: daemonizer\nroles:\n  worker:\n    memory: 64M\n"
                                "    command: setsid env -i sleep 3034 & sleep 0.5; echo done\n")
    result, job_id = shoal.run_job(spec, check=0, timeout=60)
    assert shoal.status(job_id)["state"] == "SUCCEEDED"
    assert processes_with_command("sleep 3034") == [], "it ended when the program did, not when it chose to"
    log = shoal.logs(job_id)
    assert "done" in log and "ended 'sleep 3034', which the program left running" in log, log


def test_a_queued_job_starts_when_the_one_before_it_ends(shoal, tmp_path):
    shoal.start_server("--cpus", "2")
    release = tmp_path / "release"
    first = write_spec(tmp_path, "name: first\nroles: {worker: {instances: 2, cpus: 1, memory: 64M, command: '"
                       + WAIT_FOR_RELEASE.format(path=release) + "'}}", "first.yaml")
    second = write_spec(tmp_path, "name: second\nroles: {worker: {instances: 1, cpus: 1, memory: 64M, command: 'true'}}",
                        "second.yaml")
    a = shoal.submit(first)
    shoal.wait_state(a, "RUNNING")
    b = shoal.submit(second)
    passes = scheduler_passes(shoal)
    wait_for(lambda: scheduler_passes(shoal) >= passes + 2, 30, what="two scheduler passes after the submission")
    assert shoal.status(b)["state"] == "QUEUED", "b needs a CPU while a holds both"
    release.touch()
    assert shoal.run("wait", a).returncode == 0
    assert shoal.run("wait", b).returncode == 0
    assert shoal.status(b)["started_ms"] >= shoal.status(a)["finished_ms"]


def test_a_failed_attempt_is_retried_and_succeeds(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: flaky
max_attempts: 2
roles:
  worker:
    instances: 2
    cpus: 0.5
    memory: 64M
    command: echo "attempt $SHOAL_ATTEMPT"; [ "$SHOAL_ATTEMPT" -ge 2 ]
""")
    result, job_id = shoal.run_job(spec, check=0, timeout=60)
    assert "after 2 attempts" in result.stderr
    detail = shoal.status(job_id)
    assert [a["state"] for a in detail["attempts"]] == ["FAILED", "SUCCEEDED"]
    assert "attempt 1" in shoal.logs(job_id, attempt=1)
    assert "attempt 2" in shoal.logs(job_id, attempt=2)


def test_parameter_servers_stop_when_the_workers_finish(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: with-ps
roles:
  worker: {instances: 2, cpus: 0.5, memory: 64M, command: sleep 0.5}
  ps: {instances: 1, cpus: 0.5, memory: 64M, command: sleep 300}
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=60)
    ps = [t for t in shoal.status(job_id)["attempts"][-1]["tasks"] if t["role"] == "ps"][0]
    assert ps["state"] == "KILLED"
    assert "stopped after every worker finished" in ps["message"]
    assert shoal.job_processes(job_id) == []


def test_a_silent_task_is_lost_after_its_heartbeat_timeout(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: hangs
timeouts: {heartbeat: 2s}
roles:
  worker: {instances: 1, cpus: 0.5, memory: 64M, command: sleep 300}
""")
    job_id = shoal.submit(spec)
    shoal.wait_state(job_id, "RUNNING")

    def agents():
        found = []
        for pid in shoal.job_processes(job_id):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"container" in f.read():
                        found.append(pid)
            except OSError:
                pass
        return found

    # The agent has started the program (the task shows its pid): it is heartbeating.
    wait_for(lambda: any(t.get("pid") for t in shoal.status(job_id)["attempts"][-1]["tasks"]), 30,
             what="the task's program to start")
    agent = wait_for(agents, 30, what="the container agent")
    assert len(agent) == 1
    os.kill(agent[0], signal.SIGSTOP)  # the agent hangs: no more heartbeats
    detail = shoal.wait_state(job_id, "FAILED", timeout=30)
    task = detail["attempts"][-1]["tasks"][0]
    assert task["state"] == "LOST", task
    assert "no heartbeat" in task["message"]
    assert shoal.job_processes(job_id) == []


def test_history_survives_a_server_restart(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, "name: remembered\nroles: {worker: {cpus: 0.5, memory: 64M, command: 'true'}}")
    job_id = shoal.submit(spec)
    assert shoal.run("wait", job_id).returncode == 0
    shoal.stop_server()
    shoal.start_server()
    listed = shoal.run("list", check=0).stdout
    assert job_id in listed and "remembered" in listed and "SUCCEEDED" in listed


def test_tasks_see_their_gpus_and_the_torchrun_variables(shoal, tmp_path):
    shoal.start_server("--gpus", "3")
    spec = write_spec(tmp_path, """
name: env
framework: pytorch
env: {SHARED: job}
roles:
  worker:
    instances: 2
    cpus: 0.5
    memory: 64M
    gpus: 1
    env: {SHARED: role}
    command: env | sort
""")
    job_id = shoal.submit(spec)
    assert shoal.run("wait", job_id).returncode == 0
    envs = []
    for index in (0, 1):
        log = shoal.logs(job_id, index=index)
        envs.append(dict(line.split("=", 1) for line in log.splitlines() if "=" in line))
    assert [e["CUDA_VISIBLE_DEVICES"] for e in envs] == ["0", "1"]
    for rank, env in enumerate(envs):
        assert env["RANK"] == str(rank) and env["SHOAL_RANK"] == str(rank)
        assert env["WORLD_SIZE"] == "2" and env["SHOAL_WORLD_SIZE"] == "2"
        assert env["LOCAL_RANK"] == "0" and env["LOCAL_WORLD_SIZE"] == "1" and env["GROUP_RANK"] == str(rank)
        assert env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == envs[0]["SHOAL_PORT"]
        assert env["SHOAL_JOB_ID"] == job_id and env["SHOAL_ATTEMPT"] == "1" and env["SHOAL_ROLE"] == "worker"
        assert env["SHOAL_INDEX"] == str(rank) and env["SHOAL_AM_ADDR"].startswith("127.0.0.1:")
        assert env["SHARED"] == "role"


def test_run_starts_the_embedded_server_once_and_reuses_it(shoal, tmp_path):
    spec = write_spec(tmp_path, "name: auto\nroles: {worker: {cpus: 0.5, memory: 64M, command: 'echo hi'}}")
    shoal.run_job(spec, check=0, timeout=60)
    first = json.loads((shoal.home / "server.json").read_text())
    _, second_id = shoal.run_job(spec, check=0, timeout=60)
    assert json.loads((shoal.home / "server.json").read_text())["pid"] == first["pid"]
    assert second_id == "job-2"
    assert "hi" in shoal.logs(second_id)


def test_logs_follow_prints_output_as_it_comes(shoal, tmp_path):
    shoal.start_server()
    release = tmp_path / "release"
    spec = write_spec(tmp_path, f"""
name: chatty
roles:
  worker: {{cpus: 0.5, memory: 64M, command: 'echo "line 1"; {WAIT_FOR_RELEASE.format(path=release)}; echo "line 2"; echo "line 3"'}}
""")
    job_id = shoal.submit(spec)
    follow = subprocess.Popen([SHOAL, "logs", job_id, "-f"], env=shoal.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The first line arrives while the job still runs: it waits for the release file.
        ready, _, _ = select.select([follow.stdout], [], [], 30)
        assert ready, "logs -f printed nothing while the job ran"
        assert follow.stdout.readline() == "line 1\n"
        assert shoal.status(job_id)["state"] == "RUNNING", "the line came before the job ended"
        assert follow.poll() is None, "logs -f is still following"
        release.touch()
        rest, _ = follow.communicate(timeout=30)
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()
    assert rest.splitlines() == ["line 2", "line 3"]


def test_logs_follow_goes_on_into_the_retry(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: retried
max_attempts: 2
roles:
  worker: {cpus: 0.5, memory: 64M, command: 'sleep 1; echo "attempt $SHOAL_ATTEMPT"; [ "$SHOAL_ATTEMPT" -ge 2 ]'}
""")
    job_id = shoal.submit(spec)
    followed = shoal.run("logs", job_id, "-f", check=0, timeout=60)
    assert followed.stdout.splitlines() == ["attempt 1", "attempt 2"], followed
    assert "attempt 2 started" in followed.stderr
    # the AM's log of each attempt
    for attempt in (1, 2):
        assert f"attempt {attempt} of {job_id}" in shoal.logs(job_id, role="am", attempt=attempt)


def test_a_server_beyond_loopback_needs_its_token_and_the_cli_and_ams_use_it(shoal, tmp_path):
    import urllib.error
    import urllib.request
    shoal.start_server("--host", "0.0.0.0")
    token = (shoal.home / "token").read_text().strip()
    assert token and oct((shoal.home / "token").stat().st_mode)[-3:] == "600"
    url = json.loads((shoal.home / "server.json").read_text())["url"]
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(url + "/api/v1/jobs", data=b"{}", method="POST"), timeout=5)
    assert refused.value.code == 401
    release = tmp_path / "release"
    spec = write_spec(tmp_path, "name: guarded\nroles: {worker: {instances: 2, cpus: 0.5, memory: 64M, command: 'env; "
                      + WAIT_FOR_RELEASE.format(path=release) + "'}}")
    job_id = shoal.submit(spec)
    # While the tasks run, the tokens Shoal's own processes hold (the AM's, each agent's
    # SHOAL_TASK_TOKEN): none of their values may reach a task.
    def started(status):  # one snapshot: both tasks of the latest attempt have their program's pid
        tasks = status["attempts"][-1]["tasks"] if status["attempts"] else []
        return len(tasks) == 2 and all(t.get("pid") for t in tasks)
    wait_for(lambda: started(shoal.status(job_id)), 60, what="both tasks to start")
    held = {}
    for pid in shoal.job_processes(job_id):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for entry in environ:
            name, _, value = entry.partition("=")
            if name.endswith("TOKEN") and value:
                held.setdefault(name, set()).add(value)
    assert len(held.get("SHOAL_TASK_TOKEN", ())) == 2, f"each agent holds its own task token: {sorted(held)}"
    release.touch()
    assert shoal.run("wait", job_id).returncode == 0, shoal.status(job_id)
    secrets = {token}.union(*held.values())
    for index in (0, 1):
        log = shoal.logs(job_id, index=index)
        assert "SHOAL_JOB_ID=" + job_id in log, "the task's environment was printed"
        for name in ("SHOAL_SERVER_TOKEN", "SHOAL_TOKEN", "SHOAL_ATTEMPT_TOKEN", "SHOAL_TASK_TOKEN", "SHOAL_MPI_TOKEN"):
            assert name + "=" not in log, f"{name} reached worker[{index}]"
        for secret in secrets:
            assert secret not in log, f"a token's value reached worker[{index}]"
