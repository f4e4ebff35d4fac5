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
    print("PROBE " + json.dumps(found), flush=True)


if __name__ == "__main__":
    main()
