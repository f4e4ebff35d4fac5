"""The control plane as a user meets it: what credentials reach a job's processes, the
CLI's global options, one submission check for the CLI and the API, and the bugs found
by killing Shoal's own processes (an AM killed, a server restarted on another port)."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import SHOAL, cmdline, wait_for, write_spec

pytestmark = pytest.mark.slow


def environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    except OSError:
        return {}


def request(url, path, token=None, body=None, method=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method or ("POST" if data else "GET"), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def wait_running(shoal, job_id):
    def running():
        tasks = shoal.status(job_id)["attempts"][-1]["tasks"] if shoal.status(job_id)["attempts"] else []
        return tasks and all(t["state"] == "RUNNING" for t in tasks)
    wait_for(running, 30, what=f"the tasks of {job_id} to run")


def server_url(shoal):
    return json.loads((shoal.home / "server.json").read_text())["url"]


def release_spec(tmp_path, name, instances=2, extra=""):
    """A job whose tasks wait for tmp_path/release before they succeed."""
    return write_spec(tmp_path, f"""
name: {name}
{extra}
roles:
  worker:
    instances: {instances}
    cpus: 0.5
    memory: 64M
    command: echo started; while [ ! -e {tmp_path}/release ]; do sleep 0.05; done; echo released
""", f"{name}.yaml")


def test_no_token_of_the_server_or_the_user_reaches_a_job_and_the_am_token_speaks_for_its_attempt_only(
        shoal, tmp_path):
    user_token = "the-users-own-token-" + "x" * 40
    shoal.env["SHOAL_TOKEN_OF_ANOTHER_TOOL"] = user_token  # whatever the shell that started the server held
    shoal.start_server()
    url = server_url(shoal)
    server_token = shoal.token()
    job_id = shoal.submit(release_spec(tmp_path, "scoped"))
    wait_running(shoal, job_id)
    pids = shoal.job_processes(job_id)
    kinds = {b"am": [], b"container": [], b"program": []}
    for pid in pids:
        args = cmdline(pid)
        kind = args[1] if len(args) > 1 and args[1] in (b"am", b"container") else b"program"
        kinds[kind].append(pid)
    assert kinds[b"am"] and len(kinds[b"container"]) == 2 and kinds[b"program"], kinds
    for pid in pids:
        env = environ(pid)
        blob = b"\0".join(env.values())
        assert server_token.encode() not in blob, f"the server's token is in the environment of {cmdline(pid)}"
        assert user_token.encode() not in blob, f"the server's shell's variables reached {cmdline(pid)}"
        assert b"SHOAL_SERVER_TOKEN" not in env and b"SHOAL_TOKEN" not in env, cmdline(pid)
    for pid in kinds[b"program"]:
        env = environ(pid)
        for secret in (b"SHOAL_TASK_TOKEN", b"SHOAL_MPI_TOKEN", b"SHOAL_ATTEMPT_TOKEN"):
            assert secret not in env, f"{secret} reached the program {cmdline(pid)}"
    for pid in kinds[b"container"]:
        assert b"SHOAL_ATTEMPT_TOKEN" not in environ(pid), "an agent holds only its task's token"

    # The AM's token: its own attempt's routes, nothing else.
    attempt_token = environ(kinds[b"am"][0])[b"SHOAL_ATTEMPT_TOKEN"].decode()
    assert attempt_token and attempt_token != server_token
    assert request(url, f"/internal/v1/jobs/{job_id}/attempts/1", attempt_token)[0] == 200
    assert request(url, f"/internal/v1/jobs/{job_id}/attempts/2", attempt_token)[0] == 403, "another attempt's"
    status, body = request(url, "/api/v1/jobs", attempt_token, {"spec": "roles: {w: {command: 'true'}}"})
    assert status == 401, body
    assert request(url, f"/api/v1/jobs/{job_id}/kill", attempt_token, {})[0] == 401
    assert request(url, "/api/v1/shutdown", attempt_token, {})[0] == 401
    assert request(url, f"/internal/v1/jobs/{job_id}/attempts/1/report", server_token, {"tasks": 3})[0] == 400, \
        "an administrator may still act on an attempt"
    (tmp_path / "release").write_text("")
    assert shoal.run("wait", job_id).returncode == 0, shoal.status(job_id)


def test_home_is_a_global_option_before_or_after_the_command_and_a_bad_server_url_is_refused(shoal, tmp_path):
    home = tmp_path / "elsewhere"
    env = {k: v for k, v in shoal.env.items() if k != "SHOAL_HOME"}
    server = subprocess.Popen([SHOAL, "--home", str(home), "server", "--port", "0"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: (home / "server.json").exists(), 10, what="`shoal --home DIR server --port 0` to start")
        listed = shoal.run("list", "--home", str(home), "--json", env=env, check=0)
        assert json.loads(listed.stdout)["jobs"] == []
        assert shoal.run("--home", str(home), "list", env=env, check=0).stdout.startswith("ID")
        bad = shoal.run("list", env=dict(env, SHOAL_SERVER="ftp://x"))
        assert bad.returncode == 2, bad
        assert "SHOAL_SERVER=ftp://x is not an http:// address" in bad.stderr and "fix:" in bad.stderr, bad.stderr
        # another program speaking HTTP where SHOAL_SERVER points is named as such
        other = subprocess.Popen(["/usr/bin/python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path, text=True)
        try:
            port = re.search(r"port (\d+)", other.stdout.readline()).group(1)
            foreign = shoal.run("list", env=dict(env, SHOAL_SERVER=f"http://127.0.0.1:{port}"))
            assert foreign.returncode == 2, foreign
            assert "answers, but is not a Shoal server" in foreign.stderr, foreign.stderr
            assert "does not answer" not in foreign.stderr, foreign.stderr
        finally:
            other.kill()
            other.wait()
        stopped = shoal.run("server", "--stop", "--home", str(home), env=env, check=0)
        assert server.wait(10) == 0, "`shoal server --stop --home DIR` stops that server"
        assert f"stopped the server at http://127.0.0.1:" in stopped.stdout and f"(pid {server.pid})" in stopped.stdout, stopped
        again = shoal.run("server", "--stop", "--home", str(home), env=env, check=0)
        assert "no server is running" in again.stderr or "nothing to stop" in again.stderr, again
    finally:
        if server.poll() is None:
            server.kill()


def test_the_api_refuses_what_submit_refuses_with_the_same_file_and_line(shoal, tmp_path):
    shoal.start_server()
    text = "name: shipped\nfiles: [missing-settings.json]\nroles:\n  worker: {instances: 1, command: 'true'}\n"
    spec = write_spec(tmp_path, text)
    cli = shoal.run("submit", str(spec))
    assert cli.returncode == 2, cli
    status, body = request(server_url(shoal), "/api/v1/jobs", shoal.token(),
                           {"spec": text, "source_name": "job.yaml", "base_dir": str(tmp_path)})
    assert status == 400, body
    message = body["error"]["message"]
    assert "job.yaml:2" in message and "missing-settings.json" in message, message
    assert message in cli.stderr, f"the CLI said:\n{cli.stderr}\nthe API said:\n{message}"
    assert json.loads(shoal.run("list", "--json", check=0).stdout)["jobs"] == [], "nothing was queued"


def test_a_killed_am_leaves_no_task_running(shoal, tmp_path):
    shoal.start_server()
    job_id = shoal.submit(release_spec(tmp_path, "orphaned"))
    wait_running(shoal, job_id)
    am = [p for p in shoal.job_processes(job_id) if cmdline(p)[1:2] == [b"am"]]
    assert len(am) == 1
    os.kill(am[0], signal.SIGKILL)
    status = shoal.wait_state(job_id, "FAILED", 30)
    assert "application master ended" in status["message"], status["message"]
    tasks = status["attempts"][-1]["tasks"]
    assert [t["state"] for t in tasks] == ["LOST", "LOST"], tasks
    assert all("application master ended before this task did" in t["message"] for t in tasks), tasks
    assert "RUNNING" not in shoal.run("status", job_id).stdout
    wait_for(lambda: not shoal.job_processes(job_id), 15, what="the attempt's processes to be swept")


def test_a_job_succeeds_when_the_server_restarts_on_another_port_while_it_runs(shoal, tmp_path):
    first = shoal.start_server()
    first_url = server_url(shoal)
    job_id = shoal.submit(release_spec(tmp_path, "survivor", extra="max_attempts: 1"))
    wait_running(shoal, job_id)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    shoal.server = None
    (shoal.home / "server.json").unlink()
    shoal.start_server()
    assert server_url(shoal) != first_url, "port 0 picks a new port"
    (tmp_path / "release").write_text("")
    status = shoal.wait_state(job_id, ("SUCCEEDED", "FAILED"), 60)
    assert status["state"] == "SUCCEEDED", status
    assert len(status["attempts"]) == 1, "no retry was wasted"
    am_log = (shoal.home / "jobs" / job_id / "attempt-1" / "am.log").read_text()
    assert "the server now listens at " + server_url(shoal) in am_log, am_log


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs as the home needs root")
def test_a_full_home_disk_keeps_list_and_status_in_agreement_and_loses_no_attempt(shoal, tmp_path):
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(shoal.home)], check=True)
    try:
        shoal.start_server()
        job_id = shoal.submit(release_spec(tmp_path, "crowded", extra="max_attempts: 2"))
        wait_running(shoal, job_id)
        # the home's disk fills up while the job runs
        subprocess.run(["dd", "if=/dev/zero", f"of={shoal.home}/filler", "bs=64k"], capture_output=True)
        assert os.statvfs(shoal.home).f_bavail == 0
        (tmp_path / "release").write_text("")
        status = shoal.wait_state(job_id, ("SUCCEEDED", "FAILED"), 60)
        listed = {j["id"]: j for j in json.loads(shoal.run("list", "--json", check=0).stdout)["jobs"]}
        assert listed[job_id]["state"] == status["state"], (listed[job_id], status["state"])
        server_log = (shoal.home / "server.out").read_text(errors="replace")
        assert server_log.count("cannot write the job history") == 1, "logged once, not at every pass"
        (shoal.home / "filler").unlink()
        wait_for(lambda: "the job history is written again" in (shoal.home / "server.out").read_text(errors="replace"),
                 10, what="the kept changes to be written")
        shoal.run("server", "--stop", check=0)
        shoal.stop_server()
        shoal.start_server()
        after = shoal.status(job_id)
        assert after["state"] == status["state"] and len(after["attempts"]) == len(status["attempts"]), after
        assert after["state"] == "SUCCEEDED", after
    finally:
        shoal.run("server", "--stop")
        shoal.stop_server()
        wait_for(lambda: subprocess.run(["umount", str(shoal.home)], capture_output=True).returncode == 0, 20,
                 what="the test's tmpfs to be unmounted")


def test_the_spec_status_json_shows_is_the_job_spec_and_can_be_submitted_again(shoal, tmp_path):
    """`shoal status --json` shows the spec in the schema a user writes: saved as a file it
    is accepted again as it is (roles in their order, sizes and durations in units), apart
    from a secret, whose value it masks and which must be given again."""
    shoal.start_server()
    spec = write_spec(tmp_path, "name: again\nmax_attempts: 2\nenv:\n  TOKEN: {secret: s3cr3t-value}\n"
                                "timeouts: {job: 90s, heartbeat: 2500ms}\nroles:\n"
                                "  worker: {instances: 2, cpus: 0.5, memory: 96M, command: 'echo rank=$SHOAL_TASK_INDEX'}\n"
                                "  chief: {memory: 1.5G, cpus: 0.5, command: 'echo chief'}\n")
    first_id = shoal.submit(spec)
    first = shoal.wait_state(first_id, ("SUCCEEDED", "FAILED"), 60)
    assert first["state"] == "SUCCEEDED", first
    shown = first["spec"]
    assert [r["name"] for r in shown["roles"]] == ["worker", "chief"], shown
    assert shown["roles"][1]["memory"] == "1536M" and shown["timeouts"]["heartbeat"] == "2500ms", shown
    assert shown["env"]["TOKEN"] == {"secret": "********"} and "s3cr3t-value" not in json.dumps(first)
    saved = write_spec(tmp_path, json.dumps(shown, indent=2), name="from-status.json")
    refused = shoal.run("submit", str(saved))
    assert refused.returncode == 2, refused
    assert "from-status.json" in refused.stderr and "env.TOKEN: holds ********" in refused.stderr, refused.stderr
    second_id = shoal.run("submit", str(saved), "--secret-env", "TOKEN=s3cr3t-value", check=0).stdout.strip()
    second = shoal.wait_state(second_id, ("SUCCEEDED", "FAILED"), 60)
    assert second["state"] == "SUCCEEDED", second
    assert second["spec"] == shown, "the job submitted from the shown spec is the same job"
    assert [(t["role"], t["index"]) for t in second["attempts"][0]["tasks"]] == [("worker", 0), ("worker", 1), ("chief", 0)]
