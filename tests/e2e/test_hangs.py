"""Hung tasks: flagged when they stop making progress, their stacks taken with `shoal
stack` without stopping them, and failed when the spec says so."""
import pytest

from conftest import wait_for, write_spec

pytestmark = pytest.mark.slow

# Worker 0 finishes its work and then waits for a message that never comes; worker 1
# keeps printing progress. Only worker 0 is hung.
PROGRAM = """
import os, sys, threading, time
def wait_for_a_peer_that_never_answers():
    threading.Event().wait()
if os.environ["SHOAL_INDEX"] == "0":
    print("reporter progress: 0.5", file=sys.stderr, flush=True)
    wait_for_a_peer_that_never_answers()
step = 0
while True:
    step += 1
    print(f"reporter progress: {min(0.99, step / 1000):.3f}", file=sys.stderr, flush=True)
    time.sleep(0.2)
"""


def hang_spec(tmp_path, on_hang):
    (tmp_path / "hangs.py").write_text(PROGRAM)
    return write_spec(tmp_path, f"""
name: hangs
roles:
  worker:
    instances: 2
    cpus: 0.5
    memory: 256M
    command: /usr/bin/python3 hangs.py
timeouts:
  hang: 3s
  on_hang: {on_hang}
""")


def test_a_hung_task_is_flagged_and_its_stacks_are_taken_without_stopping_it(shoal, tmp_path):
    shoal.start_server()
    job_id = shoal.submit(hang_spec(tmp_path, "flag"))
    wait_for(lambda: "HUNG" in shoal.run("status", job_id, check=0).stdout, 60, what="worker[0] to be flagged hung")
    status = shoal.run("status", job_id, check=0).stdout
    assert "hung: worker[0] made no progress" in status, status
    assert "worker[1]" not in status.split("hung:")[1].split("\n")[0], "worker[1] makes progress: " + status
    tasks = shoal.status(job_id)["attempts"][-1]["tasks"]
    assert [t["hung"] for t in tasks] == [True, False], tasks

    stacks = shoal.run("stack", job_id, check=0, timeout=90).stdout
    assert "######## worker[0]" in stacks and "######## worker[1]" in stacks, stacks
    assert "in wait_for_a_peer_that_never_answers" in stacks, "the Python stack names the waiting function:\n" + stacks
    assert "Thread 1" in stacks, "native stacks too:\n" + stacks
    for chatter in ("Undefined command", "libthread_db", "detached]", "auto-load"):
        assert chatter not in stacks, f"gdb's chatter ({chatter}) is left out:\n" + stacks
    assert "in wait_for_a_peer_that_never_answers" in shoal.logs(job_id, index=0), "the task log keeps the stacks"

    assert shoal.status(job_id)["state"] == "RUNNING", "taking stacks stops nothing"
    assert all(t["state"] == "RUNNING" for t in shoal.status(job_id)["attempts"][-1]["tasks"])
    shoal.run("kill", job_id, check=0)


def test_on_hang_fail_fails_the_job_with_the_reason(shoal, tmp_path):
    shoal.start_server()
    result, job_id = shoal.run_job(hang_spec(tmp_path, "fail"), check=1, timeout=120)
    detail = shoal.status(job_id)
    assert detail["state"] == "FAILED"
    assert "worker[0] failed: hung: no progress, metric or CPU use" in detail["message"], detail["message"]
    assert "worker[0]" in result.stderr and "hung" in result.stderr


def test_stack_of_a_job_that_is_not_running_is_refused(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, "name: quick\nroles: {worker: {command: 'true', memory: 64M, cpus: 0.1}}\n")
    _, job_id = shoal.run_job(spec, check=0)
    result = shoal.run("stack", job_id)
    assert result.returncode != 0
    assert "only a running job has stacks" in result.stderr, result.stderr
    unknown = shoal.run("stack", "job-999")
    assert unknown.returncode == 2, unknown.stderr
