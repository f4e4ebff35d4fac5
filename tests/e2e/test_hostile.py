"""Hostile input: specs, CLI arguments, API bodies and headers, URIs and archives built
to break Shoal. Each must be answered with a clear error (exit 2, or a 4xx from the API),
with no crash, no hang and no side effect: no job, no file, the server still serving."""
import io
import json
import os
import socket
import tarfile
import urllib.error
import urllib.request
import zipfile

import pytest

from conftest import Shoal, processes_with_env, write_spec

pytestmark = pytest.mark.slow

OK_ROLE = "roles: {worker: {instances: 1, cpus: 0.1, memory: 16M, command: 'true'}}"
MARKER = "/tmp/shoal-hostile-was-here"

HOSTILE_SPECS = [
    ("empty file", "", "hostile.yaml: roles: is missing"),
    ("only a comment", "# nothing\n", "hostile.yaml: roles: is missing"),
    ("a list at the top", "- roles\n- worker\n", "hostile.yaml: (document): must be a mapping"),
    ("a number at the top", "42\n", "hostile.yaml: (document): must be a mapping"),
    ("NUL bytes", "name: a\0b\n" + OK_ROLE, "hostile.yaml:1: holds a NUL byte"),
    ("invalid UTF-8", "name: \xff\xfe\n" + OK_ROLE, r"name: '\xff\xfe' is not a valid job name"),
    ("binary garbage", "\x00\x01\x02\x03\x89PNG\r\n\x1a\n" * 1000, "hostile.yaml:1: holds a NUL byte"),
    ("nesting 20,000 deep", "roles: " + "[" * 20000 + "]" * 20000, "hostile.yaml:1: not valid YAML: nested deeper"),
    ("a billion laughs", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                         "roles: {worker: {command: *d}}\n",
     "hostile.yaml:5: roles.worker.command: a command list must hold only text"),
    ("name escaping the state folder", "name: ../../../etc\n" + OK_ROLE,
     "name: '../../../etc' is not a valid job name"),
    ("name running a command", f"name: \"$(touch {MARKER})\"\n" + OK_ROLE, f"name: '$(touch {MARKER})' is not a valid"),
    ("a 100,000-character name", "name: " + "x" * 100_000 + "\n" + OK_ROLE, "hostile.yaml:1: name: 'xxxxxxxx"),
    ("instances past 64 bits", "roles: {worker: {instances: 99999999999999999999999, command: 'true'}}",
     "roles.worker.instances: must be a whole number (got '99999999999999999999999')"),
    ("instances in hex", "roles: {worker: {instances: 0x7fffffff, command: 'true'}}",
     "roles.worker.instances: must be between 1 and 10000 (got 2147483647)"),
    ("memory past 64 bits", "roles: {worker: {memory: 99999999999999999999T, command: 'true'}}",
     "roles.worker.memory: memory size '99999999999999999999T' is too large"),
    ("cpus NaN", "roles: {worker: {cpus: .nan, command: 'true'}}", "roles.worker.cpus: must be a number (got '.nan')"),
    ("cpus infinite", "roles: {worker: {cpus: .inf, command: 'true'}}",
     "roles.worker.cpus: must be a number (got '.inf')"),
    ("a negative heartbeat", "timeouts: {heartbeat: -5s}\n" + OK_ROLE, "timeouts.heartbeat: '-5s' is not a duration"),
    ("a billion attempts", "max_attempts: 1000000000\n" + OK_ROLE,
     "max_attempts: must be between 1 and 100 (got 1000000000)"),
    ("framework as a path", "framework: ../../bin/sh\n" + OK_ROLE, "framework: unknown framework '../../bin/sh'"),
    ("a role name with a slash", "roles: {'../w': {command: 'true'}}", "roles.../w: '../w' is not a valid role name"),
    ("a role name with a NUL", "roles: {\"w\\0x\": {command: 'true'}}", r"roles.w\x00x: holds a NUL character"),
    ("an env name with '='", "env: {'A=B': c}\n" + OK_ROLE, "env.A=B: 'A=B' is not a valid environment variable name"),
    ("a workdir that does not exist", "workdir: /nonexistent/shoal/dir\n" + OK_ROLE,
     "workdir: '/nonexistent/shoal/dir' is not a folder"),
    ("a shipped file that does not exist", "files: [/etc/shoal-does-not-exist/../../passwd]\n" + OK_ROLE,
     "files[0]: '/passwd' is not a readable file"),
    ("a shipped device", "files: [/dev/zero]\n" + OK_ROLE, "files[0]: '/dev/zero' is not a readable file"),
    ("an output escaping its task", "outputs: [{name: m, path: ../../outside, uri: /tmp/shoal-hostile-out}]\n" + OK_ROLE,
     "outputs[0].path: '../../outside' must be a folder inside the task directory"),
    ("an input of an unknown scheme", "inputs: [{name: d, uri: 'gopher://host/x', mode: download}]\n" + OK_ROLE,
     "inputs[0].uri: unknown storage scheme 'gopher://'"),
    ("an S3 input without a bucket", "inputs: [{name: d, uri: 's3://', mode: download}]\n" + OK_ROLE,
     "inputs[0].uri: 's3://' names no bucket"),
    ("an input that matches nothing", "inputs: [{name: d, uri: 'file:///nonexistent/shoal/*.csv', mode: stream}]\n" + OK_ROLE,
     'input "d": the input /nonexistent/shoal/*.csv matches no file'),
    ("an unknown input mode", "inputs: [{name: d, uri: '/etc/hostname', mode: teleport}]\n" + OK_ROLE,
     "inputs[0].mode: unknown mode 'teleport'"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for every hostile input, with one finished job (job-1) to aim at;
    yields (shoal, url). At the end: still that one job, nothing written where a hostile
    input aimed, and no process left."""
    home = tmp_path_factory.mktemp("hostile") / "home"
    home.mkdir()
    shoal = Shoal(home)
    shoal.start_server()
    target = write_spec(home.parent, "name: target\n" + OK_ROLE, "target.yaml")
    shoal.run("run", str(target), check=0)
    url = json.loads((home / "server.json").read_text())["url"]
    yield shoal, url
    listed = json.loads(shoal.run("list", "--json", check=0).stdout)
    assert [j["id"] for j in listed["jobs"]] == ["job-1"], listed
    assert sorted(os.listdir(home / "jobs")) == ["job-1"]
    shoal.stop_server()
    assert not processes_with_env(f"SHOAL_HOME={home}")


@pytest.fixture
def served(server):
    """The shared server, checked after each input: still serving, nothing written."""
    yield server
    assert not os.path.exists(MARKER)
    assert not os.path.exists("/tmp/shoal-hostile-out")
    assert http(server[1], "GET", "/api/v1/health")[0] == 200, "the server must still serve"


def http(url, method, path, body=None, headers=None):
    data = body if isinstance(body, bytes) or body is None else body.encode()
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def assert_refused(result, names, *args):
    """Exit 2, with a message that holds `names`: what names the field, argument or thing at fault."""
    assert result.returncode == 2, f"shoal {args} exited {result.returncode}:\n{result.stderr}"
    assert names in result.stderr, f"shoal {args}: expected {names!r} in:\n{result.stderr[:2000]}"
    assert "Traceback" not in result.stderr and "terminate called" not in result.stderr


@pytest.mark.parametrize("label,text,names", HOSTILE_SPECS, ids=[s[0] for s in HOSTILE_SPECS])
def test_hostile_spec(served, tmp_path, label, text, names):
    shoal, _ = served
    spec = tmp_path / "hostile.yaml"
    spec.write_bytes(text.encode("utf-8", "surrogateescape") if "\xff" not in text else text.encode("latin-1"))
    result = shoal.run("submit", str(spec), timeout=60)
    assert_refused(result, names, label)
    assert "submitted" not in result.stdout


def make_archive(tmp_path, kind, member):
    path = tmp_path / f"evil.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(member, "print('escaped')\n")
    else:
        with tarfile.open(path, "w:gz") as archive:
            data = b"print('escaped')\n"
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("kind,member", [("tar.gz", "../escaped.py"), ("tar.gz", "/tmp/shoal-hostile-abs.py"),
                                         ("zip", "lib/../../escaped.py"), ("zip", "../../../../tmp/escaped.py")])
def test_archive_with_members_outside_its_folder(served, tmp_path, kind, member):
    shoal, _ = served
    archive = make_archive(tmp_path, kind, member)
    spec = write_spec(tmp_path, f"archives: [{{path: {archive}, name: lib}}]\n" + OK_ROLE)
    result = shoal.run("submit", str(spec))
    assert_refused(result, "would unpack outside the task's folder", kind, member)


def make_special_archive(tmp_path, kind, member_type):
    """An archive with one harmless file and one member of the given tarfile type (or a
    symbolic link in a zip, which marks it through the member's Unix mode)."""
    path = tmp_path / f"special.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("lib/ok.py", "print('ok')\n")
            link = zipfile.ZipInfo("lib/passwd")
            link.create_system = 3
            link.external_attr = 0o120777 << 16
            archive.writestr(link, "/etc/passwd")
        return path
    with tarfile.open(path, "w:gz") as archive:
        data = b"print('ok')\n"
        info = tarfile.TarInfo("lib/ok.py")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
        special = tarfile.TarInfo("lib/special")
        special.type = member_type
        special.linkname = {tarfile.SYMTYPE: "/etc/shadow", tarfile.LNKTYPE: "lib/ok.py"}.get(member_type, "")
        special.devmajor, special.devminor = (1, 3) if member_type == tarfile.CHRTYPE else (8, 0)
        archive.addfile(special)
    return path


@pytest.mark.parametrize("kind,member_type,named", [
    ("tar.gz", tarfile.SYMTYPE, "the symbolic link 'lib/special -> /etc/shadow'"),
    ("tar.gz", tarfile.LNKTYPE, "the hard link 'lib/special link to lib/ok.py'"),
    ("tar.gz", tarfile.CHRTYPE, "the character device 'lib/special'"),
    ("tar.gz", tarfile.BLKTYPE, "the block device 'lib/special'"),
    ("tar.gz", tarfile.FIFOTYPE, "the FIFO 'lib/special'"),
    ("zip", None, "the symbolic link 'lib/passwd'")], ids=["symlink", "hard link", "char device", "block device",
                                                           "fifo", "zip symlink"])
def test_archive_with_links_devices_or_fifos(served, tmp_path, kind, member_type, named):
    """Refused at submit naming the member (docs/reliability.md); before, they were accepted
    and a device node and a FIFO were unpacked into the task's folder."""
    shoal, _ = served
    archive = make_special_archive(tmp_path, kind, member_type)
    spec = write_spec(tmp_path, f"archives: [{{path: {archive}, name: lib}}]\n" + OK_ROLE)
    result = shoal.run("submit", str(spec))
    assert_refused(result, f"holds {named}", kind, named)
    assert "archives[0].path" in result.stderr, result.stderr


HOSTILE_ARGS = [
    # A job id is checked before any request: a path or a shell fragment never reaches a URL.
    (("status", "../../etc/passwd"), "job: '../../etc/passwd' is not a job id; job ids look like job-12 or 12"),
    (("status", "job-" + "9" * 40), f"'job-{'9' * 40}' is not a job id"),
    (("status", "job-1; rm -rf /"), "job: 'job-1; rm -rf /' is not a job id"),
    (("logs", "job-1", "--role", "../../etc", "--index", "0"), "job 'job-1' has no role '../../etc'"),
    (("logs", "job-1", "--index", "-1"), "--index: Value -1 not in range"),
    (("logs", "job-1", "--index", "99999"), "role 'worker' has tasks 0 to 0, not 99999"),
    (("logs", "job-1", "--attempt", "99999999999999"), "--attempt = 99999999999999"),
    (("status", "job-1", "--attempt", "99"), "--attempt 99: job-1 has 1 attempt(s)"),
    (("kill", ""), "job: '' is not a job id"),
    (("kill", "job-424242"), "no job 'job-424242'"),
    (("list", "--limit", "-5"), "--limit: Value -5 not in range 1 to 1000"),
    (("list", "--state", "'; DROP TABLE jobs; --"), "state ''; DROP TABLE JOBS; --' is not a job state"),
    (("stack", "../job-1"), "job: '../job-1' is not a job id"),
    (("save-model", "job-77"), "no job 'job-77'"),
    # --instances and --memory are reported as the --set they become.
    (("run", "SPEC", "--instances", "worker=-1"), "roles.worker.instances: must be between 1 and 10000 (got -1)"),
    (("run", "SPEC", "--memory", "worker=1e999G"), "roles.worker.memory: '1e999G' is not a memory size"),
    (("run", "SPEC", "--set", "roles.worker.instances={\"a\": [1, {\"b\": null}]}"),
     "--set roles.worker.instances: roles.worker.instances: must be a whole number (got a list or mapping)"),
    (("run", "SPEC", "--bogus-flag"), "argument was not expected: --bogus-flag"),
]


@pytest.mark.parametrize("args,names", HOSTILE_ARGS, ids=[" ".join(a[0])[:40] for a in HOSTILE_ARGS])
def test_hostile_cli_arguments(served, tmp_path, args, names):
    shoal, _ = served
    spec = write_spec(tmp_path, OK_ROLE)
    args = [str(spec) if a == "SPEC" else a for a in args]
    result = shoal.run(*args, timeout=60)
    assert_refused(result, names, *args)


HOSTILE_REQUESTS = [
    ("POST", "/api/v1/jobs", "not json", {}, 400, "the request body is not valid JSON"),
    ("POST", "/api/v1/jobs", "[]", {}, 400, "the request body must be a JSON object"),
    ("POST", "/api/v1/jobs", '{"spec": 42}', {}, 400, "submit.spec must be"),
    ("POST", "/api/v1/jobs", '{"spec": "' + OK_ROLE.replace("'", "") + '", "overrides": "not a list"}', {},
     400, "submit.overrides must be a list"),
    ("POST", "/api/v1/jobs", '{"spec": "name: ../x\\n' + OK_ROLE.replace("'", "") + '"}', {},
     400, "name: '../x' is not a valid job name"),
    # urllib sends a form's Content-Type unless told otherwise, and the HTTP library reads
    # form bodies only up to 8 KiB: the refusal says so and names the fix.
    ("POST", "/api/v1/jobs", '{"spec": "' + "[" * 50000 + '"}', {}, 413,
     "may hold at most 8 KiB, and the API reads JSON; send it with Content-Type: application/json"),
    ("POST", "/api/v1/jobs", '{"spec": "' + "[" * 50000 + '"}', {"Content-Type": "application/json"}, 400,
     "job spec:1: not valid YAML"),
    ("POST", "/api/v1/jobs", '{"spec": {"roles": {"w": {"command": "true", "instances": 1e300}}}}', {},
     400, "roles.w.instances: must be a whole number (got '1e+300')"),
    ("GET", "/api/v1/jobs/..%2F..%2Fetc%2Fpasswd", None, {}, 404, "no route GET /api/v1/jobs/../../etc/passwd"),
    ("GET", "/api/v1/jobs/job-1/logs?role=../../etc&index=0", None, {}, 404, "job 'job-1' has no role '../../etc'"),
    ("GET", "/api/v1/jobs/job-1/logs/raw?role=worker&index=99999", None, {}, 404, "has tasks 0 to 0, not 99999"),
    ("GET", "/api/v1/jobs/job-1%00/logs", None, {}, 404, "'job-1\x00' is not a job id"),
    ("GET", "/api/v1/jobs?state=BOGUS", None, {}, 400, "state 'BOGUS' is not a job state"),
    ("GET", "/api/v1/jobs?limit=abc", None, {}, 400, "query parameter limit='abc'"),
    ("GET", "/api/v1/jobs?offset=1e9x", None, {}, 400, "query parameter offset='1e9x'"),
    ("GET", "/api/v1/jobs/job-1/logs?offset=-x", None, {}, 400, "query parameter offset='-x'"),
    ("GET", "/api/v1/jobs/job-1?wait_ms=forever", None, {}, 400, "query parameter wait_ms='forever'"),
    ("POST", "/api/v1/jobs/job-99999/kill", "{}", {}, 404, "no job 'job-99999'"),
    ("POST", "/api/v1/jobs/job-1/save-model", "{}", {}, 409, "job 'job-1' is SUCCEEDED"),
    ("POST", "/api/v1/jobs/job-1/stack", "{}", {}, 409, "job job-1 is SUCCEEDED"),
    ("GET", "/api/v1/jobs/job-1/series?attempt=999", None, {}, 404, "job 'job-1' has 1 attempt(s), not 999"),
    ("POST", "/internal/v1/jobs/job-1/attempts/1/report", "{garbage", {}, 400, "the request body is not valid JSON"),
    ("POST", "/internal/v1/jobs/job-1/attempts/1/report", '{"state": "RUNNING", "tasks": "no"}', {},
     400, "report.tasks must be an array"),
    ("POST", "/internal/v1/jobs/job-1/attempts/99/report", '{"state": "SUCCEEDED", "tasks": []}', {},
     404, "job 'job-1' has no attempt 99 running"),
    ("POST", "/api/v1/jobs", '{"spec": {"roles": {"w": {"command": "true"}, "w": {"command": "true"}}}}', {},
     400, "gives the key 'w' twice"),
    ("POST", "/api/v1/jobs", '{"spec": "roles: {w: {command: true}}", "spec": "roles: {x: {command: true}}"}', {},
     400, "gives the key 'spec' twice"),
    # A known path asked with another method: 405, naming the methods it takes.
    ("PUT", "/api/v1/jobs", "{}", {}, 405, "/api/v1/jobs takes POST, GET, not PUT"),
    ("DELETE", "/api/v1/jobs/job-1", None, {}, 405, "/api/v1/jobs/job-1 takes GET, not DELETE; see docs/api.md"),
    # The Content-Type is not looked at: the spec "x" is what is refused.
    ("POST", "/api/v1/jobs", '{"spec": "x"}', {"Content-Type": "text/html; charset=\u00ff".encode("latin-1").decode("latin-1")},
     400, "job spec: (document): must be a mapping"),
    # tokens that are not the server's: no state changes
    ("POST", "/api/v1/jobs/job-1/kill", "{}", {"Authorization": ""}, 401, "/kill changes state and needs a token"),
    ("POST", "/api/v1/jobs/job-1/kill", "{}", {"Authorization": "Bearer wrong"},
     401, "/kill changes state and needs a token"),
    ("POST", "/api/v1/jobs/job-1/kill", "{}", {"Authorization": "Basic YWRtaW46YWRtaW4="},
     401, "/kill changes state and needs a token"),
    # One header line over 8 KiB: refused before the HTTP library would fail to read it.
    ("POST", "/api/v1/jobs/job-1/kill", "{}", {"Authorization": "Bearer " + "a" * 10_000},
     431, "the header Authorization is longer than 8192 bytes"),
    ("POST", "/api/v1/shutdown", "{}", {"Authorization": "Bearer "},
     401, "POST /api/v1/shutdown changes state and needs a token"),
    ("POST", "/api/v1/jobs", '{"spec": "roles: {w: {command: touch /tmp/shoal-hostile-was-here}}"}', {"Authorization": "bearer x"},
     401, "POST /api/v1/jobs changes state and needs a token"),
]


@pytest.mark.parametrize("method,path,body,headers,expected,names", HOSTILE_REQUESTS,
                         ids=[f"{r[0]} {r[1][:40]} {str(r[2])[:20]}" for r in HOSTILE_REQUESTS])
def test_hostile_api_request(served, method, path, body, headers, expected, names):
    shoal, url = served
    status, reply = http(url, method, path, body, {"Authorization": f"Bearer {shoal.token()}", **headers})
    assert status == expected, f"{method} {path} answered {status}, expected {expected}: {reply[:300]!r}"
    message = json.loads(reply)["error"]["message"]
    assert names in message, f"{method} {path}: expected {names!r} in {message[:300]!r}"


def test_a_huge_header_and_body_are_refused(served):
    shoal, url = served
    status, _ = http(url, "GET", "/api/v1/jobs", headers={"X-Padding": "a" * 200_000})
    assert 400 <= status < 500
    # A body over 64 MiB is refused from its Content-Length, before it is read. (Sending
    # the body too races the server's early reply and close against the upload: the
    # client may see a broken pipe instead of the 413.)
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(f"POST /api/v1/jobs HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {shoal.token()}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {(64 << 20) + 1}\r\n\r\n".encode())
        reply = conn.recv(4096).decode(errors="replace")
    assert reply.startswith("HTTP/1.1 413"), reply[:300]


def raw_request(url, data: bytes, timeout=30):
    """Sends raw bytes to the server; returns what it answers before closing or timing out."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as conn:
        conn.sendall(data)
        reply = b""
        try:
            while chunk := conn.recv(65536):
                reply += chunk
                if b"\r\n\r\n" in reply and b"}" in reply:
                    break
        except (socket.timeout, ConnectionResetError):
            pass
    return reply.decode(errors="replace")


def test_a_megabyte_url_is_too_long_and_two_lengths_are_refused(served):
    _, url = served
    reply = raw_request(url, b"GET /api/v1/jobs?name=" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert reply.startswith("HTTP/1.1 414"), reply[:300]
    assert "POST body" in reply, reply[:300]
    reply = raw_request(url, b"POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
                             b"Content-Length: 20\r\n\r\n{}")
    assert reply.startswith("HTTP/1.1 400") and "two different Content-Length" in reply, reply[:300]


def servers_of(home):
    """Pids of the `shoal server` processes serving `home`."""
    needle = b"\0server\0--home\0" + str(home).encode() + b"\0"
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def test_the_server_stays_up_under_idle_slow_and_long_polling_clients(tmp_path):
    """1,000 connections that only connect, 200 that send their headers a byte at a time and
    200 long polls, all held open from this machine: the CLI still answers, a running job
    still succeeds, and no second server is started."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    home = tmp_path / "home"
    home.mkdir()
    shoal = Shoal(home)
    shoal.start_server()
    url = json.loads((home / "server.json").read_text())["url"]
    host, port = url.removeprefix("http://").rsplit(":", 1)
    spec = write_spec(tmp_path, "name: steady\nroles: {worker: {instances: 2, cpus: 0.1, memory: 16M, "
                                "command: 'for i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done'}}\n")
    job = shoal.submit(spec)
    version = shoal.status(job)["version"]
    held = []
    try:
        for _ in range(1000):
            held.append(socket.create_connection((host, int(port)), timeout=30))
        slow = []
        for _ in range(200):
            conn = socket.create_connection((host, int(port)), timeout=30)
            conn.sendall(b"GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(conn)
        held += slow
        for _ in range(200):
            conn = socket.create_connection((host, int(port)), timeout=30)
            conn.sendall(f"GET /api/v1/jobs/{job}?wait_version={version + 1000}&wait_ms=60000 HTTP/1.1\r\n"
                         f"Host: 127.0.0.1\r\n\r\n".encode())
            held.append(conn)
        for tick in range(4):
            for conn in slow:
                conn.sendall(b"a")
            listed = shoal.run("list", "--json", check=0, timeout=20)
            assert job in listed.stdout
            assert http(url, "GET", "/api/v1/health")[0] == 200
        assert shoal.wait_state(job, "SUCCEEDED", timeout=60)["state"] == "SUCCEEDED"
        assert "tick 6" in shoal.logs(job, index=1)
        info = json.loads((home / "server.json").read_text())
        assert info["url"] == url and info["pid"] == shoal.server.pid, "no second server was started"
        assert servers_of(home) == [shoal.server.pid]
    finally:
        for conn in held:
            conn.close()
        shoal.stop_server()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
