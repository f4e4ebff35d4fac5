"""Bad specs and flags: exit code 2, an error naming the field and the fix, nothing started."""
import pytest

from conftest import write_spec

pytestmark = pytest.mark.slow

OK_ROLE = "roles: {worker: {instances: 1, cpus: 1, memory: 64M, command: 'true'}}"

BAD_SPECS = [
    ("unknown field", "name: x\ncolour: blue\n" + OK_ROLE, "colour"),
    ("misspelt role field", "roles: {worker: {instnces: 2, command: 'true'}}", "did you mean 'instances'"),
    ("wrong type", "roles: {worker: {instances: two, command: 'true'}}", "roles.worker.instances"),
    ("zero instances", "roles: {worker: {instances: 0, command: 'true'}}", "roles.worker.instances"),
    ("negative instances", "roles: {worker: {instances: -3, command: 'true'}}", "roles.worker.instances"),
    ("malformed memory", "roles: {worker: {memory: 4XB, command: 'true'}}", "roles.worker.memory"),
    ("memory as a list", "roles: {worker: {memory: [1], command: 'true'}}", "roles.worker.memory"),
    ("missing command", "roles: {worker: {instances: 2}}", "roles.worker.command"),
    ("empty command", "roles: {worker: {command: ''}}", "roles.worker.command"),
    ("no roles", "name: x", "roles"),
    ("roles not a map", "roles: [worker]", "roles"),
    ("unknown framework", "framework: caffe2\n" + OK_ROLE, "framework"),
    ("zero cpus", "roles: {worker: {cpus: 0, command: 'true'}}", "roles.worker.cpus"),
    ("negative gpus", "roles: {worker: {gpus: -1, command: 'true'}}", "roles.worker.gpus"),
    ("more cpus than the machine", "roles: {worker: {cpus: 4096, command: 'true'}}", "roles.worker.cpus"),
    ("more memory than the machine", "roles: {worker: {memory: 64T, command: 'true'}}", "roles.worker.memory"),
    ("gpus on a machine without", "roles: {worker: {gpus: 1, command: 'true'}}", "roles.worker.gpus"),
    ("a job larger than the cluster", "roles: {worker: {instances: 9000, cpus: 1, memory: 1M, command: 'true'}}", "roles"),
    ("zero attempts", "max_attempts: 0\n" + OK_ROLE, "max_attempts"),
    ("bad duration", "timeouts: {heartbeat: forever}\n" + OK_ROLE, "timeouts.heartbeat"),
    ("heartbeat timeout shorter than two heartbeats", "timeouts: {heartbeat: 1ms}\n" + OK_ROLE, "timeouts.heartbeat"),
    ("YAML syntax", "roles: {worker: {command: 'true'\n", "not valid YAML"),
    ("bad env name", "env: {'A-B': 1}\n" + OK_ROLE, "env.A-B"),
    ("bad role name", "roles: {'w k': {command: 'true'}}", "roles.w k"),
    ("service not a bool", "roles: {worker: {service: perhaps, command: 'true'}}", "roles.worker.service"),
    ("nproc_per_node for xgboost", "framework: xgboost\nroles: {worker: {nproc_per_node: 2, cpus: 1, memory: 64M, "
     "command: 'true'}}", "roles.worker.nproc_per_node"),
    ("the role name am, which names the AM's log", "roles: {am: {command: 'true'}}", "roles.am"),
]


@pytest.mark.parametrize("label,text,field", BAD_SPECS, ids=[b[0] for b in BAD_SPECS])
def test_bad_spec_is_refused_before_anything_starts(shoal, tmp_path, label, text, field):
    spec = write_spec(tmp_path, text)
    result = shoal.run("run", str(spec), timeout=30)
    assert result.returncode == 2, result.stderr
    assert field in result.stderr, result.stderr
    assert "job.yaml" in result.stderr
    assert "submitted" not in result.stderr
    assert not (shoal.home / "server.json").exists(), "a bad spec must not even start the server"


def test_bad_flags_are_refused_with_the_flag_named(shoal, tmp_path):
    spec = write_spec(tmp_path, OK_ROLE)
    result = shoal.run("run", str(spec), "--instances", "worker=0")
    assert result.returncode == 2
    assert "flag --set roles.worker.instances" in result.stderr
    result = shoal.run("run", str(spec), "--memory", "4G")
    assert result.returncode == 2 and "ROLE=VALUE" in result.stderr
    result = shoal.run("run", str(tmp_path / "missing.yaml"))
    assert result.returncode == 2 and "missing.yaml" in result.stderr


def test_a_spec_that_is_a_folder_or_endless_is_refused_at_once(shoal, tmp_path):
    folder = shoal.run("submit", str(tmp_path), timeout=30)
    assert folder.returncode == 2, folder.stderr
    assert "is a folder" in folder.stderr and "roles" not in folder.stderr, folder.stderr
    endless = shoal.run("submit", "/dev/zero", timeout=30)  # read for ever before
    assert endless.returncode == 2, endless.stderr
    assert "larger than 8 MiB" in endless.stderr, endless.stderr
    assert not (shoal.home / "server.json").exists(), "nothing started"


def test_a_running_server_refuses_what_does_not_fit_its_capacity(shoal, tmp_path):
    shoal.start_server("--cpus", "2")
    spec = write_spec(tmp_path, "roles: {worker: {instances: 3, cpus: 1, memory: 64M, command: 'true'}}")
    result = shoal.run("submit", str(spec))
    assert result.returncode == 2
    assert "more than the whole cluster" in result.stderr
    assert shoal.run("list", check=0).stdout.count("\n") == 1, "no job was created"


def test_unknown_jobs_are_exit_2(shoal):
    shoal.start_server()
    for command in (["status", "job-77"], ["kill", "job-77"], ["logs", "job-77"], ["status", "nonsense"]):
        result = shoal.run(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert "job" in result.stderr
