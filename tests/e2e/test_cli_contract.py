"""What scripts rely on, end to end through the real CLI and server: `shoal wait`'s exit
codes and -q, short job ids, the list filters and paging, Ctrl-C of `shoal run` (docs/cli.md);
and the rules a spec sets: timeouts.job, tolerate_failure, outputs' on_failure both ways
(docs/job-spec.md, docs/data.md), and a job that goes on while its server is stopped with
`server --stop` and started again (docs/job-lifecycle.md)."""
import json
import re
import signal
import subprocess

import pytest

from conftest import SHOAL, wait_for, write_spec

pytestmark = pytest.mark.slow

SMALL = "cpus: 0.25, memory: 64M"


def job_spec(tmp_path, name, command, extra="", file=None):
    return write_spec(tmp_path, f"name: {name}\n{extra}roles:\n  worker: {{{SMALL}, command: '{command}'}}\n",
                      name=file or f"{name}.yaml")


def release_command(tmp_path):
    """A program that says it started, then waits for the test to create the release file."""
    return f"echo started; while [ ! -e {tmp_path}/release ]; do sleep 0.1; done"


def test_wait_exit_codes_and_quiet(shoal, tmp_path):
    shoal.start_server()
    ok = shoal.submit(job_spec(tmp_path, "ok", "true"))
    bad = shoal.submit(job_spec(tmp_path, "bad", "exit 3"))
    killed = shoal.submit(job_spec(tmp_path, "killed", "sleep 600"))
    shoal.wait_state(killed, "RUNNING")
    shoal.run("kill", killed, check=0, timeout=60)
    assert shoal.run("wait", ok, timeout=60).returncode == 0
    failed = shoal.run("wait", bad, timeout=60)
    assert failed.returncode == 1 and "FAILED" in failed.stderr and "exit code 3" in failed.stderr, failed
    assert shoal.run("wait", killed, timeout=60).returncode == 1
    quiet = shoal.run("wait", "-q", bad, timeout=60)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (1, "", ""), quiet
    unknown = shoal.run("wait", "job-4242", timeout=60)
    assert unknown.returncode == 2 and "job-4242" in unknown.stderr, unknown


def test_kill_takes_several_jobs_and_kills_none_when_one_id_names_no_job(shoal, tmp_path):
    shoal.start_server()
    first, second = (shoal.submit(job_spec(tmp_path, name, "sleep 600")) for name in ("first", "second"))
    for job in (first, second):
        shoal.wait_state(job, "RUNNING")
    mistyped = shoal.run("kill", first, "job-4242", second, timeout=60)
    assert mistyped.returncode == 2 and "job-4242" in mistyped.stderr, mistyped
    assert [shoal.status(job)["state"] for job in (first, second)] == ["RUNNING", "RUNNING"], "one unknown id kills none"
    # The number alone names a job too, and a job named twice is killed once.
    killed = shoal.run("kill", first, second.removeprefix("job-"), first, "--json", check=0, timeout=60)
    assert [(job["id"], job["state"]) for job in json.loads(killed.stdout)] == [(first, "KILLED"), (second, "KILLED")]
    again = shoal.run("kill", second, check=0, timeout=60)
    assert again.stdout == f"{second} KILLED\n", again.stdout


def test_a_job_id_may_be_given_as_its_number(shoal, tmp_path):
    shoal.start_server()
    job_id = shoal.submit(job_spec(tmp_path, "numbered", "echo numbered-output"))
    number = job_id.removeprefix("job-")
    assert shoal.run("wait", number, check=0, timeout=60)
    assert json.loads(shoal.run("status", number, "--json", check=0).stdout)["id"] == job_id
    assert "numbered-output" in shoal.run("logs", number, check=0).stdout
    refused = shoal.run("status", "job-x1")
    assert refused.returncode == 2 and "job-x1" in refused.stderr, refused


def test_list_filters_by_user_name_and_state_and_pages(shoal, tmp_path):
    shoal.start_server()
    alice = shoal.run("user", "add", "alice", "--unix-user", "root", check=0).stdout.strip().split()[-1]
    as_alice = dict(shoal.env, SHOAL_TOKEN=alice)
    ids = []
    for name, env in (("train-a", None), ("eval-b", as_alice), ("train-c", as_alice)):
        spec = job_spec(tmp_path, name, "true")
        ids.append(shoal.run("submit", str(spec), check=0, env=env).stdout.strip())
    for job_id in ids:
        shoal.run("wait", job_id, check=0, timeout=60)

    def listed(*args):
        return [j["id"] for j in json.loads(shoal.run("list", "--json", *args, check=0).stdout)["jobs"]]

    assert listed() == ids[::-1], "newest first"
    assert listed("--user", "alice") == [ids[2], ids[1]]
    assert listed("--name", "train") == [ids[2], ids[0]]
    assert listed("--user", "alice", "--name", "eval") == [ids[1]]
    assert listed("--limit", "1", "--offset", "1") == [ids[1]]
    assert listed("--offset", "3") == []
    assert listed("--state", "succeeded") == ids[::-1], "states are read in any case"
    assert listed("--state", "FAILED") == []
    page = json.loads(shoal.run("list", "--json", "--limit", "2", check=0).stdout)
    assert (page["total"], len(page["jobs"])) == (3, 2), page


def test_ctrl_c_of_run_kills_the_job_and_says_so(shoal, tmp_path):
    spec = job_spec(tmp_path, "interrupted", "echo started; sleep 600")
    run = subprocess.Popen([SHOAL, "run", str(spec)], env=shoal.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        job_id = wait_for(lambda: next((j["id"] for j in json.loads(shoal.run("list", "--json").stdout or '{"jobs": []}')
                                        .get("jobs", []) if j["state"] == "RUNNING"), None), 60,
                          what="the job to run")
        wait_for(lambda: "started" in shoal.logs(job_id), 30, what="the program to start")
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, stderr
    assert f"killing {job_id} (Ctrl-C)" in stderr and "KILLED" in stderr, stderr
    assert shoal.status(job_id)["state"] == "KILLED"
    wait_for(lambda: not shoal.job_processes(job_id), 15, what="the job's processes to end")


def test_an_attempt_past_timeouts_job_fails_naming_the_timeout_and_is_retried(shoal, tmp_path):
    shoal.start_server()
    spec = job_spec(tmp_path, "overdue", "sleep 600", extra="max_attempts: 2\ntimeouts: {job: 3s}\n")
    result, job_id = shoal.run_job(spec, check=1, timeout=120)
    status = shoal.status(job_id)
    assert status["state"] == "FAILED" and len(status["attempts"]) == 2, status
    for attempt in status["attempts"]:
        assert attempt["message"] == "the attempt ran longer than timeouts.job (3.0s)", attempt
    assert "timeouts.job" in status["message"], status["message"]
    assert not shoal.job_processes(job_id)


def test_a_tolerated_failure_leaves_the_job_succeeded_and_the_task_failed(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, f"""
name: tolerant
roles:
  worker: {{instances: 2, {SMALL}, command: 'sleep 1; echo worker-done'}}
  helper: {{{SMALL}, tolerate_failure: true, command: 'echo giving up >&2; exit 7'}}
""")
    result, job_id = shoal.run_job(spec, check=0, timeout=120)
    tasks = {(t["role"], t["index"]): t for t in shoal.status(job_id)["attempts"][-1]["tasks"]}
    assert tasks[("helper", 0)]["state"] == "FAILED" and tasks[("helper", 0)]["exit_code"] == 7, tasks
    assert [tasks[("worker", i)]["state"] for i in (0, 1)] == ["SUCCEEDED", "SUCCEEDED"]
    # Negative control: the same job without tolerate_failure fails, naming the helper.
    strict = write_spec(tmp_path, spec.read_text().replace("tolerate_failure: true, ", "").replace("tolerant", "strict"),
                        name="strict.yaml")
    result, strict_id = shoal.run_job(strict, check=1, timeout=120)
    assert "helper[0]" in shoal.status(strict_id)["message"]


def test_outputs_of_a_failed_task_are_committed_only_with_on_failure(shoal, tmp_path):
    shoal.start_server()
    out = tmp_path / "out"
    spec = write_spec(tmp_path, f"""
name: partial
outputs:
  - {{name: crash, uri: {out}/crash, from: "worker[0]", on_failure: true}}
  - {{name: model, uri: {out}/model, from: "worker[0]"}}
roles:
  worker:
    cpus: 0.25
    memory: 64M
    command: echo dump > $SHOAL_OUTPUT_CRASH_DIR/core.txt; echo weights > $SHOAL_OUTPUT_MODEL_DIR/m.bin; exit 1
""")
    result, job_id = shoal.run_job(spec, check=1, timeout=120)
    assert (out / "crash" / "core.txt").read_text() == "dump\n", "on_failure: true commits a failed task's output"
    assert not (out / "model").exists(), "without it, a failed task's output is not committed"


def test_a_job_goes_on_while_its_server_is_stopped_and_started_again(shoal, tmp_path):
    shoal.start_server()
    job_id = shoal.submit(job_spec(tmp_path, "unattended", release_command(tmp_path)))
    wait_for(lambda: "started" in shoal.logs(job_id), 60, what="the program to start")
    stopped = shoal.run("server", "--stop", "--home", str(shoal.home), check=0)
    assert shoal.server.wait(30) == 0, stopped
    shoal.server = None
    assert shoal.job_processes(job_id), "`server --stop` leaves running jobs running"
    shoal.start_server()
    (tmp_path / "release").write_text("")
    status = shoal.wait_state(job_id, ("SUCCEEDED", "FAILED"), 60)
    assert status["state"] == "SUCCEEDED" and len(status["attempts"]) == 1, status
