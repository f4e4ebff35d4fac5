"""The leak check every end-to-end test ends with (conftest's processes_with_env) must see
a process through its execs: /proc/PID/environ reads empty while a process execs, and
a check that took that for its environment would pass with a leaked process that
happened to exec at that moment. The children here exec a shell script 400 times each,
as a job's wrapper scripts do, while the check runs in a tight loop; once seen, a child
must be seen by every later check."""
import os
import subprocess
import time

from conftest import processes_with_env

REEXEC = 'if [ "$1" -gt 0 ]; then exec /bin/sh "$0" $(($1 - 1)); fi; exec /bin/sleep 5\n'


def test_the_leak_check_sees_processes_through_their_execs(tmp_path):
    script = tmp_path / "reexec.sh"
    script.write_text(REEXEC)
    marker = f"SHOAL_LEAK_CHECK_TEST={os.getpid()}"
    env = dict(os.environ, SHOAL_LEAK_CHECK_TEST=str(os.getpid()))
    children = [subprocess.Popen(["/bin/sh", str(script), "400"], env=env) for _ in range(20)]
    try:
        pids, seen, misses, checks = {c.pid for c in children}, set(), 0, 0
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            now = set(processes_with_env(marker)) & pids
            misses += len(seen - now)
            seen |= now
            checks += 1
        assert seen == pids, f"{len(pids - seen)} of 20 children never found"
        assert misses == 0, f"{misses} times a child found before was missed later, in {checks} checks"
    finally:
        for child in children:
            child.kill()
            child.wait()
