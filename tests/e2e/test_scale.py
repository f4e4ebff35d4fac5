"""Scale with real processes: a job of 1,000 tiny tasks on this machine, each with its
own real agent, succeeds, every task's output is there, and nothing is left behind.
(The 10,000-task case runs on a simulated cluster: bench/scale.)"""
import pytest

from conftest import write_spec

pytestmark = pytest.mark.slow


def test_a_job_of_a_thousand_tiny_tasks_succeeds(shoal, tmp_path):
    # Every task must register before any program starts. Starting 1,000 agents, each in
    # cgroups of its own, took this 2-core machine 1.5 to 2.5 minutes while each agent's
    # set-up ran inside its task's CPU quota (one CI run lost the default timeouts.register
    # of 2m); it takes about 16 s now, and the whole job under a minute. The job still
    # declares a longer register timeout, as the user of a job this size on a busy small
    # machine would.
    spec = write_spec(tmp_path, """
name: thousand
timeouts: {register: 6m}
roles:
  worker:
    instances: 1000
    cpus: 0.001
    memory: 16M
    command: "sleep 1; echo done $SHOAL_INDEX"
""")
    shoal.start_server()
    job = shoal.submit(spec)
    status = shoal.wait_state(job, {"SUCCEEDED", "FAILED", "KILLED"}, timeout=480)
    assert status["state"] == "SUCCEEDED", (status.get("message"), shoal.log_tails(3)[-3000:])
    tasks = status["attempts"][-1]["tasks"]
    assert len(tasks) == 1000
    assert all(t["state"] == "SUCCEEDED" for t in tasks)
    summary = shoal.run("status", job, check=0).stdout
    assert "worker:  1,000 SUCCEEDED" in summary, summary
    for index in (0, 499, 999):
        assert shoal.logs(job, index=index).strip() == f"done {index}"
