"""Other processes as /proc shows them, for the tests' leak checks (the end-to-end
fixtures and the chaos run): their pids, command lines and environments.

An environment is read the way Shoal's own sweep reads it (FindProcessesWithEnvironment
in src/common/process.cc): /proc/PID/environ reads empty while a process execs, through
a file opened on the program it leaves and until the kernel has set up the new one's
stack (its command line reads empty then too). A check that took that empty read for the
process's environment would miss a leaked process that happened to exec at that moment,
so such a read is tried again, for at most 20 ms."""
import os
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
