"""Retries and resumes, outside the chaos suite and with its exact expectations: a task's
program, its container agent or the attempt's application master killed with SIGKILL
fails the attempt naming what died, and the retry resumes from the checkpoint the first
attempt left, so no finished step is done again (docs/reliability.md, docs/job-lifecycle.md)."""
import os
import re
import signal

import pytest

from conftest import cmdline, wait_for, write_spec

pytestmark = pytest.mark.slow

# Six steps, a checkpoint after each, in a folder both attempts share. The first attempt
# stops after step 3 and waits to be killed; the retry goes on from the checkpoint.
PROGRAM = r'''
import os, sys, time
path = os.path.join(sys.argv[1], "step")
start = int(open(path).read()) if os.path.exists(path) else 0
print(f"attempt {os.environ['SHOAL_ATTEMPT']} starts at step {start}", flush=True)
for step in range(start, 6):
    print(f"step {step}", flush=True)
    with open(path + ".tmp", "w") as f:
        f.write(str(step + 1))
    os.replace(path + ".tmp", path)
    if step == 2 and os.environ["SHOAL_ATTEMPT"] == "1":
        print("checkpointed 3, waiting", flush=True)
        while True:
            time.sleep(1)
print("done", flush=True)
'''

# What the first attempt's message names for each victim.
CAUSES = {
    "program": re.compile(r"worker\[0\] failed: killed by signal 9"),
    "agent": re.compile(r"worker\[0\].*the container ended before its task did"),
    "am": re.compile(r"application master ended"),
}


def victim_pid(shoal, job_id, victim):
    for pid in shoal.job_processes(job_id):
        argv = cmdline(pid)
        if victim == "am" and argv[1:2] == [b"am"]:
            return pid
        if victim == "agent" and argv[1:2] == [b"container"]:
            return pid
        if victim == "program" and b"resume.py" in argv[1:2]:
            return pid
    return None


@pytest.mark.parametrize("victim", sorted(CAUSES))
def test_a_killed_attempt_is_retried_and_resumes_from_its_checkpoint(shoal, tmp_path, victim):
    shoal.start_server()
    (tmp_path / "resume.py").write_text(PROGRAM)
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    spec = write_spec(tmp_path, f"""
name: resumable
max_attempts: 2
roles:
  worker: {{cpus: 0.5, memory: 128M, command: /usr/bin/python3 resume.py {checkpoints}}}
""")
    job_id = shoal.submit(spec)
    wait_for(lambda: "checkpointed 3" in shoal.logs(job_id, attempt=1), 60, what="three steps and a checkpoint")
    pid = wait_for(lambda: victim_pid(shoal, job_id, victim), 10, what=f"the {victim}'s process")
    os.kill(pid, signal.SIGKILL)
    status = shoal.wait_state(job_id, ("SUCCEEDED", "FAILED", "KILLED"), 120)
    assert status["state"] == "SUCCEEDED", (status, shoal.log_tails())
    first, second = status["attempts"]
    assert first["state"] == "FAILED" and CAUSES[victim].search(first["message"]), first["message"]
    retry = shoal.logs(job_id, attempt=2)
    assert "attempt 2 starts at step 3" in retry and "done" in retry, retry
    assert not re.search(r"^step [012]$", retry, re.M), f"a finished step ran again:\n{retry}"
    assert (checkpoints / "step").read_text() == "6"
    wait_for(lambda: not shoal.job_processes(job_id), 15, what="the job's processes to end")
