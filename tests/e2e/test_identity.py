"""Identity end to end: a server running as root runs each job as its owner's Unix account,
and one user's job reaches nothing of the server's or of another user's job.

Two accounts are made for the test (conftest's unix_accounts: shoal-ann, shoal-bob)."""
import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import SHOAL, wait_for, write_spec

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("useradd"),
                                 reason="needs root to make accounts and run jobs as them")]

HERE = Path(__file__).resolve().parent
SECRET = "bobs-secret-value-7f3a"


@pytest.fixture
def shared():
    """A folder every account may pass through: the jobs folder and the jobs' programs."""
    top = Path(tempfile.mkdtemp(prefix="shoal-identity-", dir="/tmp"))
    top.chmod(0o755)
    (top / "work").mkdir(mode=0o755)
    shutil.copy(HERE / "identity_probe.py", top / "work" / "identity_probe.py")
    yield top
    shutil.rmtree(top, ignore_errors=True)


def as_user(shoal, token):
    return dict(shoal.env, SHOAL_TOKEN=token)


def add_user(shoal, name, *flags):
    return shoal.run("user", "add", name, *flags, check=0).stdout.strip()


def test_a_job_runs_as_its_owner_and_reaches_nothing_of_another(shoal, unix_accounts, shared):
    shoal.start_server("--jobs-dir", str(shared / "jobs"))
    url = json.loads((shoal.home / "server.json").read_text())["url"]
    ann = add_user(shoal, "ann", "--unix-user", "shoal-ann")
    bob = add_user(shoal, "bob", "--unix-user", "shoal-bob")
    work = shared / "work"

    # Bob's job: a program that holds a secret in its environment and waits.
    bob_spec = write_spec(work, """
name: bobs
roles:
  worker:
    memory: 64M
    command: echo "pid $$ as $(id -un)"; exec sleep 120
""", name="bob.yaml")
    bob_job = shoal.run("submit", str(bob_spec), "--secret-env", f"API_KEY={SECRET}", env=as_user(shoal, bob),
                        check=0).stdout.strip()
    shoal.wait_state(bob_job, "RUNNING")
    line = wait_for(lambda: re.search(r"pid (\d+) as (\S+)", shoal.logs(bob_job)), what="bob's program to start")
    assert line.group(2) == "shoal-bob", "bob's program runs as bob's account"
    bob_attempt = shared / "jobs" / bob_job / "attempt-1"
    other = {"job": bob_job, "pid": int(line.group(1)), "task_dir": str(bob_attempt / "worker-0"),
             "log": str(bob_attempt / "worker-0.log")}

    def probe(name, token):
        plan = work / f"{name}-plan.json"
        plan.write_text(json.dumps({"home": str(shoal.home), "jobs": str(shared / "jobs"), "url": url, "other": other}))
        plan.chmod(0o644)
        spec = write_spec(work, f"""
name: {name}
roles:
  worker:
    memory: 128M
    command: /usr/bin/python3 identity_probe.py {plan}
""", name=f"{name}.yaml")
        job = shoal.run("submit", str(spec), env=as_user(shoal, token) if token else None, check=0).stdout.strip()
        shoal.wait_state(job, "SUCCEEDED")
        found = re.search(r"PROBE (.*)", shoal.logs(job))
        assert found, shoal.logs(job)
        return job, json.loads(found.group(1))

    # The same probe as the server's owner (root): the probe can tell reach from refusal.
    _, owners = probe("owners", None)
    assert owners["account"] == "root"
    assert owners["read token"] == "allowed" and owners["read other environment"] == "allowed", owners

    ann_job, found = probe("anns", ann)
    assert found["account"] == "shoal-ann", found
    for what in ("read token", "read database", "read users", "write home", "list jobs folder",
                 "list other task folder", "read other log", "read other environment", "signal other program"):
        assert found[what].startswith("PermissionError"), (what, found)
    # Its cgroups: the attempt's limits are root's, another job's group is bob's, the
    # server's group is root's (checked where the server holds tasks in cgroups).
    if shoal.get_json("/api/v1/cluster")["task_limits"]["enforced"]:
        for what in ("raise attempt memory limit", "join other job's cgroup"):
            assert owners[what] == "allowed", (what, owners)  # the probe names the right files
        for what in ("raise attempt memory limit", "join other job's cgroup", "leave for the server's cgroup"):
            assert found[what].startswith("PermissionError"), (what, found)
    assert found["kill other job with task token"] in ("HTTP 401", "HTTP 403"), found

    # Ann's own folders and logs are ann's; her user token cannot kill bob's job either.
    ann_uid = unix_accounts["shoal-ann"].pw_uid
    ann_attempt = shared / "jobs" / ann_job / "attempt-1"
    for path in (ann_attempt.parent, ann_attempt, ann_attempt / "worker-0", ann_attempt / "am.log"):
        assert path.stat().st_uid == ann_uid, path
    assert oct(ann_attempt.parent.stat().st_mode)[-3:] == "700"
    refused = shoal.run("kill", bob_job, env=as_user(shoal, ann))
    assert refused.returncode == 2 and "belongs to bob" in refused.stderr, refused.stderr
    assert shoal.status(bob_job)["state"] == "RUNNING"
    assert SECRET not in json.dumps(found)
    shoal.run("kill", bob_job, env=as_user(shoal, bob), check=0)
    shoal.wait_state(bob_job, "KILLED")
    shoal.stop_server()


def test_a_root_server_refuses_what_it_cannot_run_as_someone(shoal, unix_accounts, shared):
    shoal.start_server("--jobs-dir", str(shared / "jobs"))
    refused = shoal.run("user", "add", "carol", "--unix-user", "no-such-account")
    assert refused.returncode == 2 and "'no-such-account'" in refused.stderr and "useradd" in refused.stderr, refused
    dave = add_user(shoal, "dave")
    spec = write_spec(shared / "work", "name: unlinked\nroles:\n  worker:\n    command: 'true'\n", name="dave.yaml")
    unlinked = shoal.run("submit", str(spec), env=as_user(shoal, dave))
    assert unlinked.returncode == 2 and "shoal user add dave --unix-user" in unlinked.stderr, unlinked.stderr

    # A working directory the account cannot enter is refused at submit, naming it.
    erin = add_user(shoal, "erin", "--unix-user", "shoal-ann")
    private = shared / "private"
    private.mkdir(mode=0o700)
    spec = write_spec(private, "name: closed\nroles:\n  worker:\n    command: 'true'\n")
    closed = shoal.run("submit", str(spec), env=as_user(shoal, erin))
    assert closed.returncode == 2 and f"cannot reach {private}" in closed.stderr, closed.stderr
    assert json.loads(shoal.run("list", "--json", check=0).stdout)["jobs"] == [], "nothing was queued"

    bad = subprocess.run([SHOAL, "server", "--home", str(shared / "h"), "--run-as",
                          "no-such-account"], capture_output=True, text=True, env=shoal.env, timeout=30)
    assert bad.returncode == 2 and "--run-as" in bad.stderr and "'no-such-account'" in bad.stderr, bad.stderr
    shoal.stop_server()


def test_a_root_servers_default_jobs_folder_is_refused_with_the_fix(shoal, unix_accounts, shared):
    shoal.start_server()  # jobs under the home, which is 0700 and root's
    frank = add_user(shoal, "frank", "--unix-user", "shoal-bob")
    spec = write_spec(shared / "work", "name: nowhere\nroles:\n  worker:\n    command: 'true'\n", name="frank.yaml")
    refused = shoal.run("submit", str(spec), env=as_user(shoal, frank))
    assert refused.returncode == 2 and "--jobs-dir" in refused.stderr, refused.stderr
    shoal.stop_server()
