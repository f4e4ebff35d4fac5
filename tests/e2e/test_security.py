"""Security end to end: jobs belong to the users who submitted them, calls that change
state need a token on a loopback server too, and secret variables never show."""
import hashlib
import json
import urllib.error
import urllib.request

import pytest

from conftest import wait_for, write_spec

pytestmark = pytest.mark.slow

SECRET = "hunter2-correct-horse-battery"


def as_user(shoal, token):
    """The CLI environment of another user of the same server."""
    return dict(shoal.env, SHOAL_TOKEN=token)


def post(url, path, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + path, data=b"{}", method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_users_act_on_their_own_jobs_and_secrets_are_masked(shoal, tmp_path):
    shoal.start_server()
    url = json.loads((shoal.home / "server.json").read_text())["url"]
    # Both run as root here; test_identity.py runs users' jobs as accounts of their own.
    ann = shoal.run("user", "add", "ann", "--unix-user", "root", check=0).stdout.strip()
    bob = shoal.run("user", "add", "bob", "--unix-user", "root", check=0).stdout.strip()
    assert len(ann) == 64 and ann != bob
    assert oct((shoal.home / "users.json").stat().st_mode)[-3:] == "600"

    # The program proves it got the real value (its hash) and then prints the value itself.
    spec = write_spec(tmp_path, """
name: guarded
roles:
  worker:
    cpus: 0.25
    memory: 64M
    command: >-
      printf '%s' "$API_KEY" | sha256sum; echo "key is $API_KEY";
      echo "failing with $API_KEY" >&2; sleep 30
""")
    submitted = shoal.run("submit", str(spec), "--secret-env", f"API_KEY={SECRET}", env=as_user(shoal, ann), check=0)
    job_id = submitted.stdout.strip()
    status = shoal.wait_state(job_id, "RUNNING")
    assert status["user"] == "ann", status

    # Another user can neither kill nor read it; an anonymous caller cannot change it.
    refused = shoal.run("kill", job_id, env=as_user(shoal, bob))
    assert refused.returncode == 2 and "belongs to ann" in refused.stderr, refused.stderr
    refused = shoal.run("status", job_id, env=as_user(shoal, bob))
    assert refused.returncode == 2 and "belongs to ann" in refused.stderr, refused.stderr
    code, body = post(url, f"/api/v1/jobs/{job_id}/kill")
    assert code == 401 and "needs a token" in body["error"]["message"], body
    code, body = post(url, f"/api/v1/jobs/{job_id}/save-model", bob)
    assert code == 403, body

    # The secret is masked in the API's spec, in the log (on disk and through the API),
    # and in the failure line the AM saw; the program itself had the real value.
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    log = wait_for(lambda: (text := shoal.run("logs", job_id, env=as_user(shoal, ann)).stdout) and "failing" in text and text,
                   what="the task's output")
    assert digest in log, log
    assert SECRET not in log and "key is ********" in log, log
    on_disk = "".join(p.read_text() for p in (shoal.home / "jobs" / job_id).glob("attempt-*/*.log"))
    assert on_disk and SECRET not in on_disk, on_disk
    detail = shoal.run("status", job_id, "--json", env=as_user(shoal, ann), check=0).stdout
    assert SECRET not in detail and json.loads(detail)["spec"]["env"]["API_KEY"] == {"secret": "********"}, detail

    # The owner kills it; the server's owner (its token) may act on every job.
    shoal.run("kill", job_id, env=as_user(shoal, ann), check=0)
    final = shoal.wait_state(job_id, "KILLED")
    assert SECRET not in json.dumps(final), final
    other = shoal.run("submit", str(spec), env=as_user(shoal, bob), check=0).stdout.strip()
    shoal.wait_state(other, "RUNNING")
    shoal.run("kill", other, check=0)  # with <home>/token, the server's
    shoal.wait_state(other, "KILLED")
    shoal.stop_server()


def get_as_host(url, path, host):
    """GET through a raw socket, so the Host header is exactly what a rebound page sends."""
    import http.client
    import urllib.parse
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    connection.putrequest("GET", path, skip_host=True)
    connection.putheader("Host", host)
    connection.endheaders()
    reply = connection.getresponse()
    body = reply.read()
    connection.close()
    return reply.status, body


def test_a_page_that_rebinds_its_name_to_the_server_reads_nothing(shoal, tmp_path):
    shoal.start_server()
    url = json.loads((shoal.home / "server.json").read_text())["url"]
    port = url.rsplit(":", 1)[1]
    job_id = shoal.submit(write_spec(tmp_path, """
name: private-work
roles:
  worker: {cpus: 0.25, memory: 64M, command: echo the-private-output; sleep 30}
"""))
    shoal.wait_state(job_id, "RUNNING")
    for path in ("/api/v1/jobs", f"/api/v1/jobs/{job_id}", f"/api/v1/jobs/{job_id}/logs?index=0", "/"):
        status, body = get_as_host(url, path, f"evil.example.com:{port}")
        assert status == 403, (path, status, body)
        assert b"private-work" not in body and b"the-private-output" not in body
        assert b"evil.example.com" in body, body  # the refusal names the Host
    status, body = get_as_host(url, "/api/v1/jobs", f"localhost:{port}")
    assert status == 200 and b"private-work" in body
    shoal.run("kill", job_id, check=0)


def test_the_home_and_the_history_are_the_owners_alone(shoal):
    shoal.home.mkdir(parents=True, exist_ok=True)
    shoal.home.chmod(0o755)  # as an older server or a user's mkdir left it
    shoal.start_server()
    assert oct(shoal.home.stat().st_mode)[-3:] == "700"
    for name in ("shoal.db", "shoal.db-wal", "shoal.db-shm", "token"):
        assert oct((shoal.home / name).stat().st_mode)[-3:] == "600", name
