"""What one job can reach of the server and of another user's job.

Run as a job's program: `python3 identity_probe.py SPEC.json`, where the JSON names what
to try (the server's home and URL, the other job's folder, log, pid, id). Prints one line,
`PROBE {...}`, mapping each attempt to "allowed" or the error that stopped it."""
import json
import os
import pwd
import sys
import urllib.error
import urllib.request


def attempt(action):
    try:
        action()
        return "allowed"
    except OSError as error:
        return f"{type(error).__name__}: {error.strerror}"


def read(path):
    with open(path, "rb") as handle:
        handle.read(1)


def kill_with_task_token(url, job):
    token = os.environ.get("SHOAL_TASK_TOKEN", "")
    request = urllib.request.Request(f"{url}/api/v1/jobs/{job}/kill", data=b"{}", method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return f"HTTP {reply.status}"
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"


def own_memory_group():
    """This process's memory cgroup folder: (v1) N:memory:/path or (v2) 0::/path."""
    for line in open("/proc/self/cgroup").read().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return "/sys/fs/cgroup/memory" + path
    for line in open("/proc/self/cgroup").read().splitlines():
        if line.startswith("0::"):
            return "/sys/fs/cgroup" + line[3:]
    return None


def write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def cgroup_attempts(other_job):
    """What the job may do to the cgroups the server made: its task's group is below its
    attempt's, which the server delegated to the job's account with the limits kept."""
    task = own_memory_group()
    if not task or not os.path.isdir(task):
        return {}
    attempt = os.path.dirname(task)
    server = os.path.dirname(attempt)
    limit = "memory.limit_in_bytes" if os.path.exists(f"{attempt}/memory.limit_in_bytes") else "memory.max"
    others = [d for d in os.listdir(server) if d.startswith(other_job + ".")] if os.access(server, os.R_OK) else []
    other_task = f"{server}/{others[0]}/worker-0" if others else f"{server}/{other_job}.1/worker-0"
    return {
        "raise attempt memory limit": attempt_to(lambda: write(f"{attempt}/{limit}", "max" if limit == "memory.max" else "-1")),
        "join other job's cgroup": attempt_to(lambda: write(f"{other_task}/cgroup.procs", str(os.getpid()))),
        "leave for the server's cgroup": attempt_to(lambda: write(f"{server}/cgroup.procs", str(os.getpid()))),
    }


def attempt_to(action):
    return attempt(action)


def main():
    plan = json.loads(open(sys.argv[1]).read())
    home, other = plan["home"], plan["other"]
    found = {
        "account": pwd.getpwuid(os.geteuid()).pw_name,
        "read token": attempt(lambda: read(f"{home}/token")),
        "read database": attempt(lambda: read(f"{home}/shoal.db")),
        "read users": attempt(lambda: read(f"{home}/users.json")),
        "write home": attempt(lambda: open(f"{home}/planted", "w").close()),
        "list jobs folder": attempt(lambda: os.listdir(plan["jobs"])),
        "list other task folder": attempt(lambda: os.listdir(other["task_dir"])),
        "read other log": attempt(lambda: read(other["log"])),
        "read other environment": attempt(lambda: read(f"/proc/{other['pid']}/environ")),
        "signal other program": attempt(lambda: os.kill(other["pid"], 0)),
        "kill other job with task token": kill_with_task_token(plan["url"], other["job"]),
    }
    found.update(cgroup_attempts(other["job"]))
    print("PROBE " + json.dumps(found), flush=True)


if __name__ == "__main__":
    main()
