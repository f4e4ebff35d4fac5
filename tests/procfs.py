"""Other processes and cgroups as /proc shows them, for the tests' leak checks (the
end-to-end fixtures and the chaos run): processes' pids, command lines and environments,
and the cgroups a Shoal server made.

An environment is read the way Shoal's own sweep reads it (FindProcessesWithEnvironment
in src/common/process.cc): /proc/PID/environ reads empty while a process execs, through
a file opened on the program it leaves and until the kernel has set up the new one's
stack (its command line reads empty then too). A check that took that empty read for the
process's environment would miss a leaked process that happened to exec at that moment,
so such a read is tried again, for at most 20 ms."""
import hashlib
import hmac
import os
import socket
import time


def other_pids():
    """Every process but this one."""
    me = os.getpid()
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != me]


def read(pid, name):
    """The bytes of /proc/PID/NAME, or None once the process is gone or hides it."""
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except OSError:
        return None


def runs_a_program(pid):
    """Kernel threads and zombies have no program (and no environment to wait for)."""
    try:
        os.readlink(f"/proc/{pid}/exe")
        return True
    except OSError:
        return False


def environment(pid):
    """The process's NAME=value entries, each ended by a NUL; None once it is gone."""
    env = read(pid, "environ")
    for _ in range(40):
        if env != b"" or not runs_a_program(pid):
            break
        settled = bool(read(pid, "cmdline"))  # no exec under way, or it is done
        env = read(pid, "environ")
        if settled:
            break
        if env == b"":
            time.sleep(0.0005)
    return env


def has_marker(env, marker):
    """Whether an environment (as `environment` returns it) holds NAME=value exactly."""
    needle = marker.encode() + b"\0"
    return env.startswith(needle) or b"\0" + needle in env


def own_cgroup_directories():
    """This process's own directory in every cgroup hierarchy mounted (v1: one per
    mount, v2: the unified one), from /proc/self/cgroup and /proc/self/mountinfo."""
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f.read().splitlines():
            _, controllers, path = line.split(":", 2)
            own[controllers] = path
    directories = []
    with open("/proc/self/mountinfo") as f:
        for line in f.read().splitlines():
            fields = line.split(" ")
            root, mount_point = fields[3], fields[4]
            fstype, options = fields[fields.index("-") + 1], set(fields[fields.index("-") + 3].split(","))
            if fstype == "cgroup2":
                key = ""
            elif fstype == "cgroup":
                key = next((k for k in own if k and set(k.split(",")) <= options), None)
            else:
                continue
            path = own.get(key)
            if path is not None and (path + "/").startswith(root.rstrip("/") + "/"):
                directories.append(mount_point + path[len(root.rstrip("/")):])
    return directories


def server_cgroups(home):
    """The cgroups that a server on `home` made on this host (its top group,
    shoal-<server id>, in every hierarchy; its jobs' groups are below it) and that exist."""
    key = f"{socket.gethostname()}:{home}".encode()
    server_id = hmac.new(b"shoal server id", key, hashlib.sha256).hexdigest()[:8]  # ServerId, common/paths.cc
    tops = (directory.rstrip("/") + "/shoal-" + server_id for directory in own_cgroup_directories())
    return [top for top in tops if os.path.isdir(top)]


def groups_below(tops):
    """Every group below the given ones."""
    return [os.path.join(directory, name) for top in tops for directory, names, _ in os.walk(top) for name in names]


def remove_cgroups(tops):
    """Removes groups and every group below them, deepest first (a group with processes stays)."""
    for directory in sorted(tops + groups_below(tops), key=lambda path: -path.count("/")):
        try:
            os.rmdir(directory)
        except OSError:
            pass
