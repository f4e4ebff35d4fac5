"""Bad specs and flags: exit code 2, an error naming the field and the fix, nothing started."""
import json
import urllib.error
import urllib.request

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
    ("a job larger than the cluster", "roles: {worker: {instances: 9000, cpus: 1, memory: 16M, command: 'true'}}", "roles"),
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
    assert "flag --instances worker=0: roles.worker.instances" in result.stderr, result.stderr
    result = shoal.run("run", str(spec), "--set", "roles.worker.instances=-1")
    assert result.returncode == 2 and "flag --set roles.worker.instances" in result.stderr, result.stderr
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


ROLE = "{instances: 1, cpus: 1, memory: 64M, command: 'true'}"
NEVER_WORKS = [
    ("a role given twice", f"roles:\n  w: {ROLE}\n  w: {ROLE}\n", "job.yaml:3: roles.w: is given twice (first at line 2)"),
    ("instances given twice", "roles:\n  worker:\n    instances: 1\n    command: 'true'\n    instances: 3\n",
     "job.yaml:5: roles.worker.instances: is given twice (first at line 3)"),
    ("a key given twice in JSON", '{"roles": {"w": {"command": "true"}, "w": {"command": "false"}}}',
     "job.yaml:1: roles.w: is given twice"),
    ("a second YAML document", OK_ROLE + "\n---\n" + OK_ROLE + "\n", "job.yaml:3: a second YAML document"),
    ("a NUL in a command", 'roles: {worker: {memory: 64M, command: "echo a\\0b"}}',
     "roles.worker.command: holds a NUL character"),
    ("a NUL in a variable", '{"env": {"A": "x\\u0000y"}, ' + OK_ROLE.replace("roles:", '"roles":')
     .replace("worker", '"worker"') + "}", "env.A: holds a NUL character"),
    ("inputs whose variables collide", "inputs:\n  - {name: train, uri: /etc/hostname, mode: placeholder}\n"
     "  - {name: TRAIN, uri: /etc/hostname, mode: placeholder}\n" + OK_ROLE,
     "job.yaml:3: inputs[1].name: 'TRAIN' and 'train' (inputs[0]) would both set SHOAL_INPUT_TRAIN"),
    ("outputs whose variables collide", "outputs: [{name: model, uri: /tmp/shoal-e2e-a}, {name: MODEL, uri: "
     "/tmp/shoal-e2e-b}]\n" + OK_ROLE, "would both set SHOAL_OUTPUT_MODEL_DIR"),
    ("two shipped files with one base name", "files: [/etc/hostname, /etc/../etc/hostname]\n" + OK_ROLE,
     "files[1]: a copy of /etc/../etc/hostname would land in the task's folder as 'hostname'"),
    ("two archives with one name", "archives: [a/env.tar.gz, b/env.zip]\n" + OK_ROLE,
     "archives[1].name: the unpacked"),
    ("memory below what a task needs", "roles: {worker: {memory: 1M, command: 'true'}}",
     "roles.worker.memory: '1M' is less than the 16M a task needs to start"),
    ("an output into the root folder", "outputs: [{name: model, uri: /}]\n" + OK_ROLE,
     "outputs[0].uri: '/' is the root folder"),
    ("a command past one argument's limit", "roles: {worker: {memory: 64M, command: 'true " + "x" * 200_000 + "'}}",
     "roles.worker.command: is 200005 bytes, more than the"),
    ("variables past the total limit", "env: {" + ", ".join(f"V{i}: {'v' * 100_000}" for i in range(25)) + "}\n"
     + OK_ROLE, "roles.worker: its command and variables take"),
]


@pytest.mark.parametrize("label,text,message", NEVER_WORKS, ids=[b[0] for b in NEVER_WORKS])
def test_a_spec_that_could_never_work_is_refused_at_submit(shoal, tmp_path, label, text, message):
    spec = write_spec(tmp_path, text)
    result = shoal.run("submit", str(spec), timeout=30)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr, result.stderr
    assert not result.stdout, "no job id: nothing was submitted"
    assert not (shoal.home / "server.json").exists(), "a bad spec must not even start the server"


def test_an_output_holding_the_servers_home_is_refused_by_the_cli_and_the_api(shoal, tmp_path):
    for uri in (shoal.home, shoal.home.parent, f"file://{shoal.home}/"):
        spec = write_spec(tmp_path, f"outputs: [{{name: model, uri: '{uri}'}}]\n" + OK_ROLE)
        result = shoal.run("submit", str(spec), timeout=30)
        assert result.returncode == 2, result.stderr
        assert "outputs[0].uri" in result.stderr and "server's home" in result.stderr, result.stderr
    shoal.start_server()
    status, reply = api_submit(shoal, {"spec": f"outputs: [{{name: model, uri: '{shoal.home.parent}'}}]\n" + OK_ROLE})
    assert status == 400 and "holds the server's home" in reply["error"]["message"], (status, reply)
    assert shoal.run("list", check=0).stdout.count("\n") == 1, "no job was created"


def api_submit(shoal, body):
    """POST /api/v1/jobs with the server's token: (status, reply)."""
    url = json.loads((shoal.home / "server.json").read_text())["url"]
    request = urllib.request.Request(f"{url}/api/v1/jobs", json.dumps(body).encode(),
                                     {"Content-Type": "application/json", "Authorization": f"Bearer {shoal.token()}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_name_derived_from_the_file_or_the_api_is_made_valid(shoal, tmp_path):
    """The user did not write it, so it is cleaned rather than refused; a name: the user
    wrote is still checked as written."""
    shoal.start_server()
    spec = write_spec(tmp_path, OK_ROLE, '"><img src=x onerror=alert(1)>.yaml')
    from_file = shoal.submit(spec)
    status, reply = api_submit(shoal, {"spec": OK_ROLE, "default_name": "../../etc/passwd"})
    assert status == 200, reply
    names = {job["id"]: job["name"] for job in json.loads(shoal.run("list", "--json", check=0).stdout)["jobs"]}
    assert names == {from_file: "img-src-x-onerror-alert-1", reply["id"]: "etc-passwd"}, names
    for job in names:
        shoal.run("wait", job, check=0, timeout=60)
    status, reply = api_submit(shoal, {"spec": "name: ../../etc/passwd\n" + OK_ROLE})
    assert status == 400 and "is not a valid job name" in reply["error"]["message"], reply
