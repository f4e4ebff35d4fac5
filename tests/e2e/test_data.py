"""Data management against a real S3 service: a single-node Ceph with its RADOS Gateway on
loopback (scripts/ceph-up.sh), started once for the session and stopped at its end.
Inputs in the three modes (download, placeholder, stream), outputs committed with
_SUCCESS, Save Model during a run, and the inputs refused before anything starts."""
import json
import shutil
import os
import re
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import REPO, processes_with_env, wait_for, write_spec

pytestmark = pytest.mark.slow

BUCKET = "shoal-e2e"


class S3:
    """Just enough S3 for the tests, through curl's SigV4 (the service under test is
    Shoal's own client; this one only prepares and inspects)."""

    def __init__(self, env):
        self.endpoint = env["AWS_ENDPOINT_URL"]
        self.base = ["curl", "-sS", "--aws-sigv4", "aws:amz:us-east-1:s3",
                     "--user", f"{env['AWS_ACCESS_KEY_ID']}:{env['AWS_SECRET_ACCESS_KEY']}",
                     "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]

    def _curl(self, *args, data=None):
        result = subprocess.run([*self.base, "-w", "\n%{http_code}", *args], input=data, capture_output=True,
                                timeout=60)
        body, _, code = result.stdout.rpartition(b"\n")
        return int(code or 0), body

    def put(self, key, data: bytes):
        code, body = self._curl("-X", "PUT", "--data-binary", "@-", f"{self.endpoint}/{BUCKET}/{key}", data=data)
        assert code == 200, (code, body)

    def make_bucket(self, bucket=BUCKET):
        code, body = self._curl("-X", "PUT", f"{self.endpoint}/{bucket}")
        assert code in (200, 409), (code, body)

    def get(self, key):
        code, body = self._curl(f"{self.endpoint}/{BUCKET}/{key}")
        return body if code == 200 else None

    def start_upload(self, key, part=b"p" * 4096):
        """An unfinished multipart upload with one part stored: what a process killed in
        the middle of a large upload leaves."""
        code, body = self._curl("-X", "POST", f"{self.endpoint}/{BUCKET}/{key}?uploads=")
        assert code == 200, (code, body)
        upload_id = re.search(r"<UploadId>([^<]+)</UploadId>", body.decode()).group(1)
        code, body = self._curl("-X", "PUT", "--data-binary", "@-",
                                f"{self.endpoint}/{BUCKET}/{key}?partNumber=1&uploadId={upload_id}", data=part)
        assert code == 200, (code, body)
        return upload_id

    def uploads(self, prefix):
        """Keys of the unfinished multipart uploads under prefix (curl signs the query as
        written: its parameters in sorted order)."""
        code, body = self._curl(f"{self.endpoint}/{BUCKET}?prefix={urllib.parse.quote(prefix, safe='')}&uploads=")
        assert code == 200, (code, body)
        return re.findall(r"<Key>([^<]*)</Key>", body.decode())

    def keys(self, prefix):
        found, token = [], None
        while True:
            query = {"list-type": "2", "prefix": prefix}
            if token:
                query["continuation-token"] = token
            encoded = "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in sorted(query.items()))
            code, body = self._curl(f"{self.endpoint}/{BUCKET}?{encoded}")
            assert code == 200, body
            text = body.decode()
            found += re.findall(r"<Key>([^<]*)</Key>", text)
            if "<IsTruncated>true</IsTruncated>" not in text:
                return found
            token = re.search(r"<NextContinuationToken>([^<]*)<", text).group(1)


@pytest.fixture(scope="session")
def ceph():
    """The endpoint and credentials of the session's Ceph RADOS Gateway."""
    state = Path(os.environ.get("SHOAL_CEPH_DIR", "/var/tmp/shoal-ceph"))
    up = subprocess.run([str(REPO / "scripts" / "ceph-up.sh")], capture_output=True, text=True, timeout=180)
    assert up.returncode == 0, up.stdout + up.stderr
    env = dict(line.split("=", 1) for line in (state / "s3.env").read_text().split())
    s3 = S3(env)
    s3.make_bucket()
    yield env, s3
    subprocess.run([str(REPO / "scripts" / "ceph-down.sh")], capture_output=True, timeout=120)


@pytest.fixture
def s3_shoal(shoal, ceph):
    env, s3 = ceph
    shoal.env.update(env)
    return shoal, s3


def prefix_for(request):
    return f"{request.node.name}-{os.getpid()}-{int(time.time() * 1000)}"


WORKER = r'''
import os, sys, json
task = f"{os.environ['SHOAL_ROLE']}-{os.environ['SHOAL_INDEX']}" if 'SHOAL_ROLE' in os.environ else os.environ.get('SHOAL_TASK_DIR').rsplit('/', 1)[1]
seen = {"download": [], "placeholder": [], "stream": []}
folder = os.environ["SHOAL_INPUT_TRAIN_DIR"]
for root, _, files in os.walk(folder):
    for name in files:
        with open(os.path.join(root, name)) as f:
            seen["download"] += f.read().split()
seen["placeholder"] = [u for u in os.environ.get("SHOAL_INPUT_VAL", "").split(",") if u]
assert open(os.environ["SHOAL_INPUT_VAL_FILE"]).read().split() == seen["placeholder"]
seen["stream"] = sys.stdin.read().split()
out = os.environ["SHOAL_OUTPUT_MODEL_DIR"]
with open(os.path.join(out, "model.txt"), "w") as f:
    f.write(f"model of {task}\n")
print("SEEN " + json.dumps(seen))
'''


def records(s3, prefix, files=5):
    """Objects of different sizes holding numbered lines; returns every line."""
    lines = []
    for f in range(files):
        part = [f"{prefix}-f{f}-r{i}" for i in range(40 * (f + 1))]
        s3.put(f"{prefix}/part-{f}.txt", ("\n".join(part) + "\n").encode())
        lines += part
    return lines


def test_a_two_worker_job_reads_s3_in_three_modes_and_commits_its_outputs(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    lines = records(s3, prefix)
    (tmp_path / "worker.py").write_text(WORKER)
    spec = write_spec(tmp_path, f"""
name: three-modes
inputs:
  - {{name: train, uri: "s3://{BUCKET}/{prefix}/part-*.txt", mode: download}}
  - {{name: val, uri: "s3://{BUCKET}/{prefix}/", mode: placeholder}}
  - {{name: feed, uri: "s3://{BUCKET}/{prefix}/part-*.txt", mode: stream, epochs: 2, shuffle: true}}
outputs:
  - {{name: model, path: model, uri: "s3://{BUCKET}/{prefix}-out/model"}}
roles:
  worker:
    instances: 2
    cpus: 0.5
    memory: 256M
    command: /usr/bin/python3 worker.py
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=180)
    seen = []
    for index in (0, 1):
        log = shoal.logs(job_id, index=index)
        match = re.search(r"^SEEN (.*)$", log, re.M)
        assert match, log
        seen.append(json.loads(match.group(1)))
    # download: whole files, each to exactly one worker, every record once.
    assert sorted(seen[0]["download"] + seen[1]["download"]) == sorted(lines)
    assert seen[0]["download"] and seen[1]["download"], "both workers got a share"
    # placeholder: every URI once, as URIs.
    uris = seen[0]["placeholder"] + seen[1]["placeholder"]
    assert sorted(uris) == [f"s3://{BUCKET}/{prefix}/part-{f}.txt" for f in range(5)]
    assert seen[0]["placeholder"] and seen[1]["placeholder"]
    # stream: line boundaries kept, 2 epochs, every record exactly once per epoch.
    assert sorted(seen[0]["stream"] + seen[1]["stream"]) == sorted(lines * 2)
    assert abs(len(seen[0]["stream"]) - len(seen[1]["stream"])) < 0.2 * len(lines), "balanced by size"
    # outputs: one folder per task, committed with _SUCCESS, no _temporary left.
    keys = s3.keys(f"{prefix}-out/model/")
    for index in (0, 1):
        assert f"{prefix}-out/model/worker-{index}/_SUCCESS" in keys, keys
        assert s3.get(f"{prefix}-out/model/worker-{index}/model.txt") == f"model of worker-{index}\n".encode()
    assert not [k for k in keys if "_temporary" in k], keys


def test_save_model_during_a_run_makes_a_timestamped_copy(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    release = tmp_path / "release"
    spec = write_spec(tmp_path, f"""
name: save-model
outputs:
  - {{name: model, uri: "s3://{BUCKET}/{prefix}/model", from: "worker[0]"}}
roles:
  worker:
    instances: 2
    cpus: 0.25
    memory: 128M
    command: >-
      /bin/sh -c 'echo step-100 > $SHOAL_OUTPUT_MODEL_DIR/weights.txt;
      while [ ! -e {release} ]; do sleep 0.2; done; echo final > $SHOAL_OUTPUT_MODEL_DIR/weights.txt'
""")
    job_id = shoal.submit(spec)
    shoal.wait_state(job_id, "RUNNING", timeout=60)
    wait_for(lambda: all(t.get("state") == "RUNNING" for t in shoal.status(job_id)["attempts"][-1]["tasks"]), 30,
             what="both tasks running")
    saved = shoal.run("save-model", job_id, check=0, timeout=120)
    match = re.search(r"saved (\S+): (s3://\S+)", saved.stdout)
    assert match, saved.stdout + saved.stderr
    name, uri = match.groups()
    assert re.fullmatch(r"\d{8}-\d{6}(-\d+)?", name)
    assert uri == f"s3://{BUCKET}/{prefix}/model/saved-{name}"
    assert s3.get(f"{prefix}/model/saved-{name}/weights.txt") == b"step-100\n"
    assert s3.get(f"{prefix}/model/saved-{name}/_SUCCESS") is not None
    status = shoal.run("status", job_id, check=0).stdout
    assert "saved models:" in status and name in status and "saved" in status, status
    release.touch()
    assert shoal.run("wait", job_id).returncode == 0
    assert s3.get(f"{prefix}/model/weights.txt") == b"final\n", "from: worker[0] commits to the URI itself"
    assert s3.get(f"{prefix}/model/_SUCCESS") is not None


@pytest.mark.parametrize("uri,expected", [
    ("s3://{bucket}/{prefix}/nothing-*.csv", "matches no file or object"),
    ("hdfs://namenode/data/x", "unknown storage scheme 'hdfs://'"),
    ("s3://shoal-no-such-bucket/data/x", "\"shoal-no-such-bucket\" does not exist"),
])
def test_bad_inputs_are_refused_before_anything_starts(s3_shoal, tmp_path, request, uri, expected):
    shoal, s3 = s3_shoal
    spec = write_spec(tmp_path, f"""
name: bad-input
inputs: [{{name: train, uri: "{uri.format(bucket=BUCKET, prefix=prefix_for(request))}"}}]
roles:
  worker: {{instances: 2, cpus: 0.25, memory: 64M, command: "true"}}
""")
    result = shoal.run("submit", str(spec))
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in result.stderr, result.stderr
    assert not (shoal.home / "jobs").exists() or not list((shoal.home / "jobs").iterdir()), "nothing started"


def test_wrong_credentials_give_a_clear_error(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    s3.put(f"{prefix}/a.txt", b"x\n")
    shoal.env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
    spec = write_spec(tmp_path, f"""
name: bad-credentials
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/a.txt"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "true"}}
""")
    result = shoal.run("submit", str(spec))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "refused the credentials" in result.stderr and "AWS_SECRET_ACCESS_KEY" in result.stderr, result.stderr


def test_keys_in_the_aws_config_file_alone_are_used_and_a_bad_s3_setting_is_refused(s3_shoal, tmp_path, request):
    """As the AWS tools read them: keys in the config file's profile, none in the
    environment or a credentials file. A part size below S3's least is refused at submit,
    naming the variable and its range, with nothing started."""
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    s3.put(f"{prefix}/a.txt", b"read with keys from the config file\n")
    config = tmp_path / "aws-config"
    config.write_text("[profile lab]\n"
                      f"aws_access_key_id = {shoal.env.pop('AWS_ACCESS_KEY_ID')}\n"
                      f"aws_secret_access_key = {shoal.env.pop('AWS_SECRET_ACCESS_KEY')}\n")
    shoal.env.update(AWS_CONFIG_FILE=str(config), AWS_PROFILE="lab",
                     AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials-file"))
    spec = write_spec(tmp_path, f"""
name: config-file-keys
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/a.txt"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "cat $SHOAL_INPUT_TRAIN_DIR/*"}}
""")
    refused = shoal.run("submit", str(spec), env={**shoal.env, "SHOAL_S3_PART_MB": "1"})
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "SHOAL_S3_PART_MB=1 is not a whole number from 5 to 5120" in refused.stderr, refused.stderr
    assert not (shoal.home / "jobs").exists() or not list((shoal.home / "jobs").iterdir()), "nothing started"
    _, job_id = shoal.run_job(spec, check=0, timeout=120)
    assert "read with keys from the config file" in shoal.logs(job_id)


def test_a_download_input_keeps_its_folders_skips_folder_markers_and_refuses_a_name_no_file_can_have(
        s3_shoal, tmp_path, request):
    """Keys as S3 tools leave them: folder markers (a console's "Create folder"), one
    file name in two folders, dots inside names. Each object lands under its own name,
    folders kept; a key that a disk cannot hold beside another ("b" and "b/v1..txt") is
    refused at submit, naming both, with nothing started."""
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    for key, data in [("in/", b""), ("in/a/", b""), ("in/a/v1..txt", b"from a\n"), ("in/b/v1..txt", b"from b\n")]:
        s3.put(f"{prefix}/{key}", data)
    spec = write_spec(tmp_path, f"""
name: local-names
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/in"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M,
            command: "cd $SHOAL_INPUT_TRAIN_DIR && find . -type f | sort && cat a/v1..txt b/v1..txt"}}
""")
    result, job_id = shoal.run_job(spec, check=0, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert shoal.logs(job_id) == "./a/v1..txt\n./b/v1..txt\nfrom a\nfrom b\n", shoal.logs(job_id)
    s3.put(f"{prefix}/in/b", b"a file where a folder is\n")
    jobs = len(list((shoal.home / "jobs").iterdir()))
    refused = shoal.run("submit", str(spec))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (f"s3://{BUCKET}/{prefix}/in/b would be a file where s3://{BUCKET}/{prefix}/in/b/v1..txt needs a folder"
            in refused.stderr), refused.stderr
    assert len(list((shoal.home / "jobs").iterdir())) == jobs, "nothing started"


class LoopbackFront:
    """A server on a loopback port in front of the gateway (`upstream`): each connection
    is served by `_one(client)` on a thread of its own until `close`."""

    def __init__(self, upstream):
        self.upstream = urllib.parse.urlparse(upstream)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client):
        raise NotImplementedError

    def close(self):
        self.listener.close()


class CuttingProxy(LoopbackFront):
    """An HTTP proxy in front of the gateway that answers one request per connection and
    cuts the body of every GET for a key holding `cut` halfway: a connection broken
    mid-download, every time. With `hold_s`, it sends such a GET's whole answer instead,
    after holding it that long: a download slower than the job's patience."""

    def __init__(self, upstream, cut, hold_s=0):
        self.hold_s = hold_s
        self.cut = cut.encode()
        self.cuts = 0
        super().__init__(upstream)

    @staticmethod
    def _read_message(sock, first=b""):
        data = first
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        want = int(length.group(1)) if length else 0
        while len(body) < want:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return head + b"\r\n\r\n" + body

    def _one(self, client):
        with client:
            request = self._read_message(client)
            if not request:
                return
            head, _, body = request.partition(b"\r\n\r\n")
            lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
            lines.append(b"Connection: close")
            up = socket.create_connection((self.upstream.hostname, self.upstream.port))
            with up:
                up.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
                reply = b""
                while chunk := up.recv(1 << 20):
                    reply += chunk
            rhead, _, rbody = reply.partition(b"\r\n\r\n")
            rlines = [l for l in rhead.split(b"\r\n") if not l.lower().startswith(b"connection:")]
            rlines.append(b"Connection: close")
            out = b"\r\n".join(rlines) + b"\r\n\r\n"
            if lines[0].startswith(b"GET ") and self.cut in lines[0] and self.hold_s:
                time.sleep(self.hold_s)
            elif lines[0].startswith(b"GET ") and self.cut in lines[0] and len(rbody) > 2:
                self.cuts += 1
                client.sendall(out + rbody[:len(rbody) // 2])
                return  # closed with half the body sent
            client.sendall(out + rbody)


class TlsFront(LoopbackFront):
    """https in front of the gateway, with a certificate of its own (self-signed for
    127.0.0.1, so it is its own CA): what an S3 service with a private CA looks like.
    Each connection's bytes go to the gateway and back unchanged."""

    def __init__(self, upstream, folder):
        self.ca = folder / "s3-ca.pem"
        key = folder / "s3-key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                        "-out", str(self.ca)], check=True, capture_output=True, timeout=60)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(self.ca, key)
        super().__init__(upstream)
        self.endpoint = f"https://127.0.0.1:{self.port}"

    def _one(self, client):
        try:
            tls = self.context.wrap_socket(client, server_side=True)
        except OSError:
            client.close()  # a client that does not trust the certificate hangs up here
            return
        up = socket.create_connection((self.upstream.hostname, self.upstream.port))

        def pipe(source, sink):
            try:
                while data := source.recv(1 << 16):
                    sink.sendall(data)
            except OSError:
                pass
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        threading.Thread(target=pipe, args=(up, tls), daemon=True).start()
        pipe(tls, up)


def test_an_https_endpoint_with_a_private_ca_needs_aws_ca_bundle_then_works(s3_shoal, tmp_path, request):
    """Without AWS_CA_BUNDLE the submission is refused at once, naming the certificate
    and the variable, and so is a relative AWS_CA_BUNDLE; with an absolute one, the job's
    task downloads its input over https."""
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    s3.put(f"{prefix}/a.txt", b"read over https\n")
    front = TlsFront(shoal.env["AWS_ENDPOINT_URL"], tmp_path)
    try:
        shoal.env["AWS_ENDPOINT_URL"] = front.endpoint
        spec = write_spec(tmp_path, f"""
name: private-ca
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/a.txt"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "cat $SHOAL_INPUT_TRAIN_DIR/*"}}
""")
        started = time.monotonic()
        refused = shoal.run("submit", str(spec), timeout=60)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert front.endpoint in refused.stderr and "AWS_CA_BUNDLE" in refused.stderr, refused.stderr
        assert time.monotonic() - started < 20, "refused at once, not after the retries of a broken connection"
        assert not (shoal.home / "jobs").exists() or not list((shoal.home / "jobs").iterdir()), "nothing started"
        # A relative path would be read from each task's own folder: refused at submit.
        relative = shoal.run("submit", str(spec), env={**shoal.env, "AWS_CA_BUNDLE": front.ca.name})
        assert relative.returncode == 2, relative.stdout + relative.stderr
        assert f'AWS_CA_BUNDLE "{front.ca.name}" is a relative path' in relative.stderr, relative.stderr
        assert not (shoal.home / "jobs").exists() or not list((shoal.home / "jobs").iterdir()), "nothing started"
        shoal.env["AWS_CA_BUNDLE"] = str(front.ca)
        _, job_id = shoal.run_job(spec, check=0, timeout=120)
        assert "read over https" in shoal.logs(job_id)
    finally:
        front.close()


def test_a_connection_broken_mid_download_is_retried_then_fails_naming_the_object(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    s3.put(f"{prefix}/fine.bin", b"f" * 1000)
    s3.put(f"{prefix}/broken.bin", b"b" * 300_000)
    proxy = CuttingProxy(shoal.env["AWS_ENDPOINT_URL"], "broken.bin")
    try:
        shoal.env.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}", SHOAL_S3_MAX_ATTEMPTS="3")
        spec = write_spec(tmp_path, f"""
name: broken-download
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/*.bin"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "echo the program ran"}}
""")
        result, job_id = shoal.run_job(spec, check=1, timeout=120)
        status = shoal.status(job_id)
        task = status["attempts"][-1]["tasks"][0]
        assert f"s3://{BUCKET}/{prefix}/broken.bin" in task["message"], task
        assert "after 3 tries" in task["message"], task
        assert proxy.cuts == 3, "the download was tried 3 times"
        assert "the program ran" not in shoal.logs(job_id)
    finally:
        proxy.close()


def test_a_download_outlasting_timeouts_register_loses_the_task_naming_that_timeout(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    s3.put(f"{prefix}/slow.bin", b"s" * 1000)
    proxy = CuttingProxy(shoal.env["AWS_ENDPOINT_URL"], "slow.bin", hold_s=10)
    try:
        shoal.env.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}")
        spec = write_spec(tmp_path, f"""
name: slow-download
timeouts: {{register: 3s}}
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/slow.bin"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "echo the program ran"}}
""")
        result, job_id = shoal.run_job(spec, check=1, timeout=120)
        task = shoal.status(job_id)["attempts"][-1]["tasks"][0]
        assert task["state"] == "LOST", task
        assert "registered, but its program did not start within timeouts.register (3.0s)" in task["message"], task
        assert "the program ran" not in shoal.logs(job_id)
    finally:
        proxy.close()


def test_a_full_local_disk_while_downloading_gives_a_clear_error(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    prefix = prefix_for(request)
    s3.put(f"{prefix}/big.bin", os.urandom(6 << 20))
    jobs = shoal.home / "jobs"
    jobs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(jobs)], check=True)
    try:
        spec = write_spec(tmp_path, f"""
name: full-disk
inputs: [{{name: train, uri: "s3://{BUCKET}/{prefix}/big.bin"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "true"}}
""")
        result, job_id = shoal.run_job(spec, check=1, timeout=120)
        task = shoal.status(job_id)["attempts"][-1]["tasks"][0]
        assert "the local disk is full" in task["message"], task
        assert f"s3://{BUCKET}/{prefix}/big.bin" in task["message"], task
    finally:
        shoal.run("server", "--stop", "--home", str(shoal.home))
        subprocess.run(["umount", "-l", str(jobs)])


def test_a_task_killed_during_its_upload_leaves_no_success_and_no_committed_output(s3_shoal, tmp_path, request):
    shoal, s3 = s3_shoal
    prefix = prefix_for(request)
    shoal.env.update(SHOAL_S3_PARALLELISM="1")
    spec = write_spec(tmp_path, f"""
name: killed-upload
outputs: [{{name: model, uri: "s3://{BUCKET}/{prefix}/model", from: "worker[0]"}}]
roles:
  worker:
    instances: 1
    cpus: 0.25
    memory: 256M
    command: >-
      /usr/bin/python3 -c "import os; d = os.environ['SHOAL_OUTPUT_MODEL_DIR'];
      [open(os.path.join(d, 'shard-%04d.bin' % i), 'wb').write(os.urandom(256 << 10)) for i in range(2000)]"
""")
    job_id = shoal.submit(spec)
    wait_for(lambda: [k for k in s3.keys(f"{prefix}/model/") if "_temporary" in k], 120, 0.05,
             what="the upload to start")
    shoal.run("kill", job_id, check=0, timeout=60)
    # Judged once nothing of the job runs any more, and again later: a part still in flight
    # when `kill` returned must not land afterwards.
    wait_for(lambda: not shoal.job_processes(job_id), 30, what="the job's processes to end")
    for look in ("when the job's processes have ended", "two seconds later"):
        keys = s3.keys(f"{prefix}/model/")
        assert f"{prefix}/model/_SUCCESS" not in keys, look
        assert not keys, f"{look}: the stopped upload removed its temporary copies: {len(keys)} left, e.g. {keys[:3]}"
        assert not s3.uploads(f"{prefix}/"), f"{look}: no unfinished multipart upload"
        time.sleep(2)


def test_a_shared_file_system_input_streams_and_outputs_commit_to_a_folder(shoal, tmp_path):
    """Plain paths and file:// (NFS, Lustre): no S3 needed."""
    data = tmp_path / "data"
    data.mkdir()
    lines = [f"line-{i}" for i in range(5000)]
    (data / "a.txt").write_text("\n".join(lines[:3000]) + "\n")
    (data / "b.txt").write_text("\n".join(lines[3000:]))  # no newline at the end
    out = tmp_path / "out"
    spec = write_spec(tmp_path, f"""
name: shared-fs
inputs: [{{name: feed, uri: "file://{data}/*.txt", mode: stream}}]
outputs: [{{name: counts, uri: out, on_failure: true}}]
roles:
  worker:
    instances: 2
    cpus: 0.25
    memory: 64M
    command: /bin/sh -c 'sort > $SHOAL_OUTPUT_COUNTS_DIR/lines.txt'
""")
    shoal.run_job(spec, check=0, timeout=120)
    got = []
    for index in (0, 1):
        assert (out / f"worker-{index}" / "_SUCCESS").read_text() == "lines.txt\n"
        got += (out / f"worker-{index}" / "lines.txt").read_text().split()
    assert sorted(got) == sorted(lines), "every line reached exactly one task"
    assert not list(out.glob("**/_temporary/**/*.txt"))


def test_a_downloaded_input_keeps_its_owners_rights(shoal, tmp_path):
    """A 0640 file stays 0640 (it was copied as 0644, readable by any local user), and the
    download folder is the owner's alone (0700), never wider than where the data was."""
    data = tmp_path / "private"
    data.mkdir(mode=0o700)
    (data / "shadow").write_text("root:*:19000:0:99999:7:::\n")
    (data / "shadow").chmod(0o640)
    (data / "script.sh").write_text("echo hi\n")
    (data / "script.sh").chmod(0o750)
    spec = write_spec(tmp_path, f"""
name: modes
inputs: [{{name: secret, uri: "{data}", mode: download}}]
roles:
  worker:
    instances: 1
    cpus: 0.25
    memory: 64M
    command: stat -c '%a %n' "$SHOAL_INPUT_SECRET_DIR" "$SHOAL_INPUT_SECRET_DIR/shadow" "$SHOAL_INPUT_SECRET_DIR/script.sh"
""")
    _, job = shoal.run_job(spec, check=0, timeout=120)
    modes = dict(line.split(" ", 1)[::-1] for line in shoal.logs(job).split("\n") if line.strip())
    folder = next(path for path in modes if path.endswith("/secret"))
    assert modes == {folder: "700", folder + "/shadow": "640", folder + "/script.sh": "750"}, modes


def test_an_input_gone_by_the_time_the_job_starts_fails_it_before_any_task(shoal, tmp_path):
    """The API checks inputs at submit as the CLI does; data deleted while the job waits in
    the queue is caught by the job master, which starts no task."""
    import urllib.error
    import urllib.request
    shoal.start_server("--cpus", "1")
    url = json.loads((shoal.home / "server.json").read_text())["url"]

    def post(spec_text):
        body = json.dumps({"spec": spec_text, "base_dir": str(tmp_path)}).encode()
        request = urllib.request.Request(f"{url}/api/v1/jobs", body, {"Content-Type": "application/json",
                                                                       "Authorization": f"Bearer {shoal.token()}",
                                                                       "Connection": "close"})
        try:
            with urllib.request.urlopen(request) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    spec = f"""
name: vanished
inputs: [{{name: train, uri: "{tmp_path}/gone/*.csv"}}]
roles:
  worker: {{instances: 2, cpus: 0.25, memory: 64M, command: "echo started"}}
"""
    status, reply = post(spec)
    assert status == 404 and "gone/*.csv" in reply["error"]["message"], (status, reply)
    assert "matches no file or object" in reply["error"]["message"], reply

    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "a.csv").write_text("1,2\n")
    blocker = write_spec(tmp_path, f"""
name: blocker
roles: {{worker: {{cpus: 1, memory: 64M, command: 'while [ ! -e {tmp_path}/release ]; do sleep 0.05; done'}}}}
""", "blocker.yaml")
    first = shoal.submit(blocker)
    shoal.wait_state(first, "RUNNING")
    status, reply = post(spec)
    assert status == 200, reply
    job_id = reply["id"]
    assert shoal.status(job_id)["state"] == "QUEUED"
    shutil.rmtree(tmp_path / "gone")
    (tmp_path / "release").write_text("")
    status = shoal.wait_state(job_id, "FAILED", timeout=60)
    assert "matches no file or object" in status["message"], status
    assert "gone/*.csv" in status["message"], status
    assert all(t.get("state") in ("PENDING", None) or not t.get("pid") for t in status["attempts"][-1]["tasks"]), status


def test_stream_mode_a_slow_reader_slows_the_feed_and_a_reader_may_stop_early(shoal, tmp_path):
    big = tmp_path / "big.txt"
    line = b"x" * 99 + b"\n"
    with open(big, "wb") as f:
        for _ in range(200):
            f.write(line * 10_000)  # 200 MB in all
    spec = write_spec(tmp_path, f"""
name: slow-reader
inputs: [{{name: feed, uri: "{big}", mode: stream}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 256M, command: "sleep 4; wc -l"}}
  early: {{instances: 1, cpus: 0.25, memory: 64M, command: "head -n 3 > /dev/null; echo stopped early"}}
""")
    job_id = shoal.submit(spec)

    def agent_rss_kb():
        for pid in processes_with_env(f"SHOAL_HOME={shoal.home}"):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if b"container" in cmdline and b"worker" in cmdline:
                    status = Path(f"/proc/{pid}/status").read_text()
                    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
            except (OSError, AttributeError):
                continue
        return None

    rss = wait_for(agent_rss_kb, 30, what="the worker's container agent")
    time.sleep(2)  # the reader sleeps: the feed must wait on the pipe, not buffer the file
    rss = max(rss, agent_rss_kb() or 0)
    # Under a sanitizer the agent's resident size is ASan's shadow and quarantine of freed
    # buffers, not what it holds: the bound means something in normal builds only.
    if "ASAN_OPTIONS" not in os.environ and "TSAN_OPTIONS" not in os.environ:
        assert rss < 80_000, f"the agent holds {rss} kB while its program does not read"
    assert shoal.run("wait", job_id).returncode == 0, shoal.log_tails()
    assert shoal.logs(job_id, role="worker").split()[0] == "1000000"
    assert "stopped early" in shoal.logs(job_id, role="early")


# ---- Outputs are exact: each check on a file system and on S3 where the change touches both.


class FolderStore:
    """Outputs on a file system, read back as objects (keys relative to the folder)."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def uri(self, key):
        return str(self.root / key)

    def keys(self, prefix):
        return sorted(str(p.relative_to(self.root)) for p in self.root.glob(prefix.rstrip("/") + "/**/*") if p.is_file())

    def get(self, key):
        path = self.root / key
        return path.read_bytes() if path.is_file() else None


class BucketStore:
    """Outputs in the session's S3 bucket."""

    def __init__(self, s3):
        self.s3 = s3

    def uri(self, key):
        return f"s3://{BUCKET}/{key}"

    def keys(self, prefix):
        return sorted(self.s3.keys(prefix.rstrip("/") + "/"))

    def get(self, key):
        return self.s3.get(key)


@pytest.fixture(params=["file", "s3"])
def store(request, shoal, tmp_path):
    if request.param == "file":
        return FolderStore(tmp_path / "outputs")
    env, s3 = request.getfixturevalue("ceph")
    shoal.env.update(env)
    return BucketStore(s3)


def key_prefix(request):
    return re.sub(r"[^A-Za-z0-9-]", "-", prefix_for(request))


def test_save_model_on_a_job_without_outputs_is_refused_at_once(shoal, tmp_path):
    spec = write_spec(tmp_path, """
name: no-outputs
roles:
  worker: {instances: 1, cpus: 0.25, memory: 64M, command: sleep 600}
""")
    job_id = shoal.submit(spec)
    shoal.wait_state(job_id, "RUNNING", timeout=60)
    started = time.monotonic()
    refused = shoal.run("save-model", job_id)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "has no outputs" in refused.stderr and "outputs:" in refused.stderr, refused.stderr
    assert time.monotonic() - started < 5, "refused at once, not failed later"
    assert not shoal.status(job_id).get("saved_models"), "nothing was recorded"
    shoal.run("kill", job_id, check=0, timeout=60)


def test_a_task_that_commits_no_output_still_gets_its_folder_as_scratch(shoal, tmp_path):
    """`from:` picks worker[0]; worker[1] and the ps service still get SHOAL_OUTPUT_MODEL_DIR
    (before, it was unset and "$SHOAL_OUTPUT_MODEL_DIR/x" meant /x), and nothing of theirs
    is uploaded."""
    out = tmp_path / "out"
    write = ': "${SHOAL_OUTPUT_MODEL_DIR:?is unset}"; echo "$SHOAL_ROLE $SHOAL_INDEX" > "$SHOAL_OUTPUT_MODEL_DIR/who.txt"'
    spec = write_spec(tmp_path, f"""
name: scratch-outputs
outputs: [{{name: model, uri: out, from: "worker[0]"}}]
roles:
  ps:
    instances: 1
    service: true
    cpus: 0.25
    memory: 64M
    command: >-
      /bin/sh -c '{write}; sleep 600'
  worker:
    instances: 2
    cpus: 0.25
    memory: 64M
    command: >-
      /bin/sh -c '{write}; sleep 2'
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=120)
    attempt = shoal.home / "jobs" / job_id / "attempt-1"
    assert (attempt / "worker-1" / "model" / "who.txt").read_text() == "worker 1\n"
    assert (attempt / "ps-0" / "model" / "who.txt").read_text() == "ps 0\n"
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["_SUCCESS", "who.txt"]
    assert (out / "who.txt").read_text() == "worker 0\n", "only the task `from` picks commits"


def test_a_retry_replaces_what_an_earlier_attempt_committed(shoal, store, tmp_path, request):
    prefix = key_prefix(request)
    spec = write_spec(tmp_path, f"""
name: retry-replaces
max_attempts: 2
outputs: [{{name: model, uri: "{store.uri(prefix + '/model')}", on_failure: true}}]
roles:
  worker:
    instances: 1
    cpus: 0.25
    memory: 64M
    command: >-
      /bin/sh -c 'cd "$SHOAL_OUTPUT_MODEL_DIR" && echo "attempt $SHOAL_ATTEMPT" > model.txt &&
      if [ "$SHOAL_ATTEMPT" = 1 ]; then echo stale > stale.txt; mkdir -p opt && echo 1 > opt/state.bin; exit 3; fi'
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=180)
    assert len(shoal.status(job_id)["attempts"]) == 2
    folder = f"{prefix}/model/worker-0"
    assert store.keys(f"{prefix}/model") == [f"{folder}/_SUCCESS", f"{folder}/model.txt"], \
        "attempt 1's stale.txt and opt/ are gone"
    assert store.get(f"{folder}/model.txt") == b"attempt 2\n"
    assert store.get(f"{folder}/_SUCCESS") == b"model.txt\n"


TORN_WRITER = r"""
import os, sys, time
folder, release = os.environ["SHOAL_OUTPUT_MODEL_DIR"], sys.argv[1]
n = 0
while not os.path.exists(release):
    n += 1
    with open(os.path.join(folder, "model.txt"), "w") as f:  # 0 bytes from here ...
        time.sleep(0.15)                                      # ... while the model is serialised
        f.write(f"begin {n}\n" + "w" * 65536 + f"\nend {n}\n")
    time.sleep(0.35)
"""


def test_save_model_never_commits_a_model_file_the_program_is_rewriting(shoal, store, tmp_path, request):
    """The program truncates and rewrites model.txt every 0.5 s, empty for 0.15 s of each:
    before, 2 of 6 saves committed a 0-byte model.txt and reported it saved."""
    prefix = key_prefix(request)
    release = tmp_path / "release"
    (tmp_path / "writer.py").write_text(TORN_WRITER)
    uri = store.uri(prefix + "/model")
    spec = write_spec(tmp_path, f"""
name: torn-model
outputs: [{{name: model, uri: "{uri}", from: "worker[0]"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 128M, command: /usr/bin/python3 writer.py {release}}}
""")
    job_id = shoal.submit(spec)
    shoal.wait_state(job_id, "RUNNING", timeout=60)
    wait_for(lambda: (tasks := shoal.status(job_id)["attempts"][-1]["tasks"]) and tasks[0].get("state") == "RUNNING",
             30, what="the writer to run")
    names = []
    for _ in range(8):
        saved = shoal.run("save-model", job_id, check=0, timeout=120)
        name, saved_uri = re.search(r"^saved (\S+): (\S+)$", saved.stdout, re.M).groups()
        assert f"\n  {uri}/saved-{name}/\n" in saved.stdout, "it prints the folder it commits to\n" + saved.stdout
        model = store.get(f"{prefix}/model/saved-{name}/model.txt")
        assert model and re.fullmatch(rb"begin (\d+)\nw{65536}\nend \1\n", model), \
            f"save {name} committed a torn model.txt: {model[:40] if model is not None else None!r}"
        assert store.get(f"{prefix}/model/saved-{name}/_SUCCESS") == b"model.txt\n"
        names.append(name)
        time.sleep(0.13)  # another phase of the writer's loop
    release.touch()
    assert shoal.run("wait", job_id).returncode == 0
    keys = store.keys(f"{prefix}/model")
    assert f"{prefix}/model/_SUCCESS" in keys and f"{prefix}/model/model.txt" in keys
    assert all(f"{prefix}/model/saved-{name}/model.txt" in keys for name in names), \
        "the final commit keeps the saved models under the output's URI"
    assert not [k for k in keys if "_temporary" in k], keys


def test_a_commit_sweeps_what_a_killed_attempt_left_in_temporary(s3_shoal, tmp_path, request):
    """A task killed with SIGKILL mid-upload leaves temporary objects and an unfinished
    multipart upload; the next commit into that destination removes both."""
    shoal, s3 = s3_shoal
    prefix = key_prefix(request)
    s3.put(f"{prefix}/model/_temporary/worker-0/shard-1.bin", b"x" * 4096)
    s3.start_upload(f"{prefix}/model/_temporary/worker-0/shard-2.bin")
    s3.start_upload(f"{prefix}-other/_temporary/worker-0/keep.bin")
    assert s3.uploads(f"{prefix}/model/"), "the gateway lists the unfinished upload"
    spec = write_spec(tmp_path, f"""
name: sweep
outputs: [{{name: model, uri: "s3://{BUCKET}/{prefix}/model", from: "worker[0]"}}]
roles:
  worker: {{instances: 1, cpus: 0.25, memory: 64M, command: "/bin/sh -c 'echo m > $SHOAL_OUTPUT_MODEL_DIR/model.txt'"}}
""")
    shoal.run_job(spec, check=0, timeout=120)
    assert sorted(s3.keys(f"{prefix}/model/")) == [f"{prefix}/model/_SUCCESS", f"{prefix}/model/model.txt"]
    assert s3.uploads(f"{prefix}/model/") == [], "the killed attempt's multipart upload is aborted"
    assert s3.uploads(f"{prefix}-other/") == [f"{prefix}-other/_temporary/worker-0/keep.bin"], \
        "uploads outside the destination are left alone"
