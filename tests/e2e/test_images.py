"""Tasks in OCI images (docs/isolation.md, "Images"): a job's roles run in different images
side by side (one with NumPy, one without), each container's root is its image read-only
with the task's folders mounted, the task's cgroup limits hold inside the container, a
killed agent leaves no container behind, and a bad image is refused at submit with
nothing started. The images are built from Debian's packages by
scripts/build-test-images.sh (cached in podman's storage between runs)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, cmdline, processes_with_command, unix_accounts, wait_for, write_spec  # noqa: F401

BASE = "localhost/shoal-test-base:1"
NUMPY = "localhost/shoal-test-numpy:1"
NO_SHELL = "localhost/shoal-test-nosh:1"
TORCH = "localhost/shoal-test-torch:1"


@pytest.fixture(scope="module")
def test_images():
    if not shutil.which("podman") or not shutil.which("runc"):
        pytest.fail("podman and runc are needed: scripts/install-deps.sh installs them")
    subprocess.run(["bash", str(REPO / "scripts" / "build-test-images.sh")], check=True, timeout=1200)


@pytest.fixture(scope="module")
def torch_image(test_images):
    # About 4 minutes and 1.2 GB the first time on this machine; podman's storage keeps it.
    subprocess.run(["bash", str(REPO / "scripts" / "build-test-images.sh"), "--with-torch"], check=True, timeout=1800)


@pytest.fixture
def with_images(shoal, test_images):
    shoal.start_server()
    return shoal


# What a task tells of the world it runs in.
PROBE = r'''
import json, os, sys
facts = {"uid": os.getuid(), "home": os.environ.get("HOME"), "cwd": os.getcwd()}
try:
    import numpy
    facts["numpy"] = numpy.__version__
except ImportError:
    facts["numpy"] = None
facts["os"] = open("/etc/os-release").read().split("PRETTY_NAME=")[1].split("\n")[0]
try:
    open("/usr/shoal-probe", "w")
    facts["root_writable"] = True
except OSError:
    facts["root_writable"] = False
facts["host_file_visible"] = os.path.exists(sys.argv[1])
with open(os.path.join(os.environ["SHOAL_TASK_DIR"], "written-inside"), "w") as f:
    f.write("x")
print("FACTS " + json.dumps(facts), flush=True)
'''


def facts(shoal, job_id, role):
    match = re.search(r"^FACTS (.*)$", shoal.logs(job_id, role=role), re.M)
    assert match, shoal.log_tails()
    return json.loads(match.group(1))


def test_two_roles_run_in_two_images_side_by_side(with_images, tmp_path, tmp_path_factory):
    (tmp_path / "probe.py").write_text(PROBE)
    elsewhere = tmp_path_factory.mktemp("host-only") / "secret"
    elsewhere.write_text("the host's, not the container's")
    command = f"/usr/bin/python3 probe.py {elsewhere}"
    spec = write_spec(tmp_path, f"""
name: two-images
image: {BASE}
roles:
  worker: {{memory: 256M, image: {NUMPY}, command: {command}}}
  evaluator: {{memory: 256M, command: {command}}}
""")
    result, job_id = with_images.run_job(spec, check=0)
    worker, evaluator = facts(with_images, job_id, "worker"), facts(with_images, job_id, "evaluator")
    # NumPy where the image has it, and not where it has not: not the host's python either.
    assert worker["numpy"] and worker["numpy"].startswith("1."), worker
    assert evaluator["numpy"] is None, evaluator
    for seen in (worker, evaluator):
        assert "Debian GNU/Linux 12" in seen["os"], seen
        assert seen["root_writable"] is False, "the image is read-only"
        assert seen["host_file_visible"] is False, "the host's files are not in the container"
        assert seen["cwd"] == str(tmp_path), "the job's folder is mounted at its own path"
        assert seen["home"].endswith("/worker-0") or seen["home"].endswith("/evaluator-0"), seen
    # What the program wrote in its task folder belongs to the task's account outside.
    written = list((with_images.home / "jobs" / job_id).glob("attempt-1/*/written-inside"))
    assert len(written) == 2, written
    assert all(p.stat().st_uid == os.getuid() for p in written)
    # The spec shown by the API names the images; each container was removed after its run.
    shown = with_images.get_json(f"/api/v1/jobs/{job_id}")["spec"]
    assert shown["image"] == BASE and shown["roles"][0]["image"] == NUMPY, shown
    states = list((with_images.home / "jobs" / job_id).glob("attempt-1/*/.shoal-oci/state/*"))
    assert states == [], states


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make an account and run a job as it")
def test_a_users_job_in_an_image_runs_as_that_users_account(shoal, test_images, unix_accounts):
    # A root server runs ann's job as shoal-ann: her container is root only of its own user
    # namespace, and what it writes is shoal-ann's.
    shared = Path(tempfile.mkdtemp(prefix="shoal-images-", dir="/tmp"))
    shared.chmod(0o755)
    shoal.start_server("--jobs-dir", str(shared / "jobs"))
    ann = shoal.run("user", "add", "ann", "--unix-user", "shoal-ann", check=0).stdout.strip()
    spec = write_spec(shared, f"""
name: anns
workdir: /
roles:
  worker: {{memory: 128M, image: {BASE},
           command: "echo inside $(id -u); touch $SHOAL_TASK_DIR/made-inside; cat {shoal.home}/token || echo no-token"}}
""")
    job = shoal.run("submit", str(spec), env=dict(shoal.env, SHOAL_TOKEN=ann), check=0).stdout.strip()
    status = shoal.wait_state(job, ("SUCCEEDED", "FAILED"), 60)
    log = shoal.logs(job)
    assert status["state"] == "SUCCEEDED", log + shoal.log_tails()
    assert "inside 0" in log and "no-token" in log, log
    made = shared / "jobs" / job / "attempt-1" / "worker-0" / "made-inside"
    assert made.stat().st_uid == unix_accounts["shoal-ann"].pw_uid
    shoal.run("server", "--stop", check=0)
    shutil.rmtree(shared, ignore_errors=True)


def test_a_task_over_its_memory_in_a_container_is_killed_and_says_so(with_images, tmp_path):
    limits = with_images.get_json("/api/v1/cluster")["task_limits"]
    if not limits["enforced"]:
        pytest.skip("this host gives Shoal no cgroups: " + limits["detail"])
    spec = write_spec(tmp_path, f"""
name: greedy
roles:
  worker: {{cpus: 0.5, memory: 64M, image: {BASE},
           command: "/usr/bin/python3 -c 'x = bytearray(b\\"x\\") * (300 << 20); print(len(x))'"}}
""")
    result, job_id = with_images.run_job(spec, check=1)
    status = with_images.status(job_id)
    sentence = re.compile(r"worker\[0\] used more than its 64M of memory \(peak [0-9.]+M\) and was killed by the "
                          r"kernel; raise roles\.worker\.memory")
    assert sentence.search(status["message"]), status["message"] + with_images.log_tails()


def test_a_killed_agent_leaves_no_container_behind(with_images, tmp_path):
    spec = write_spec(tmp_path, f"""
name: abandoned
roles:
  worker: {{memory: 128M, image: {BASE}, command: "sleep 3019"}}
""")
    job_id = with_images.submit(spec)
    wait_for(lambda: processes_with_command("sleep 3019"), 60, what="the program in its container")
    status = with_images.kill_agent_and_wait(job_id)
    assert status["state"] == "FAILED", status
    wait_for(lambda: not processes_with_command("sleep 3019"), 15, what="the container's program to end")
    runtimes = [p for p in os.listdir("/proc") if p.isdigit() and cmdline(int(p))[:1] == [b"runc"]]
    assert not runtimes, [cmdline(int(p)) for p in runtimes]
    # Nor the groups runc made, named after the task, in the hierarchies Shoal does not manage.
    # The server sweeps them in the background once the AM has exited, the moment the job
    # shows FAILED, so they may outlast that moment by a little.
    pattern = f"*/shoal-*.{job_id}.1.worker-0.0"
    wait_for(lambda: not list(Path("/sys/fs/cgroup").glob(pattern)), 15,
             what=f"the server to remove /sys/fs/cgroup/{pattern}")


@pytest.mark.parametrize("image,words", [
    ("localhost/shoal-no-such-image:7", ["image 'localhost/shoal-no-such-image:7' is not in this server's podman storage",
                                         "podman load"]),
    (NO_SHELL, [f"image '{NO_SHELL}' has no /bin/sh"]),
    ("bad image name", ["is not an image name"]),
])
def test_a_bad_image_is_refused_at_submit_and_nothing_starts(with_images, tmp_path, image, words):
    spec = write_spec(tmp_path, f"""
name: refused
roles:
  worker: {{image: "{image}", command: "true"}}
""")
    result = with_images.run("submit", str(spec), check=2)
    for word in words:
        assert word in result.stderr, result.stderr
    assert with_images.get_json("/api/v1/jobs")["jobs"] == [], "nothing was queued"


def test_a_job_whose_workdir_is_the_hosts_root_still_sees_its_image(with_images, tmp_path):
    # Mounting the host's / over the image would hide it: the root is the one folder not mounted.
    (tmp_path / "only-on-the-host").write_text("x")
    spec = write_spec(tmp_path, f"""
name: rooted
workdir: /
roles:
  worker: {{memory: 128M, image: {BASE}, command: "test ! -e {tmp_path}/only-on-the-host && test $(pwd) = /"}}
""")
    with_images.run_job(spec, check=0)


def test_the_ddp_example_runs_in_an_image_built_with_debians_pytorch(with_images, torch_image, tmp_path):
    # The README's example, unmodified, in an image of its own: its data are shipped in
    # (the image has none), and the repository outside the example's folder is not there.
    example = REPO / "examples" / "fashion-mnist-ddp"
    data = sorted(str(p) for p in Path("/usr/share/datasets/fashion-mnist").glob("*-ubyte.gz"))
    assert len(data) == 4, data
    spec = write_spec(tmp_path, f"""
name: ddp-in-an-image
framework: pytorch
workdir: {example}
image: {TORCH}
files: {json.dumps(data)}
env: {{OMP_NUM_THREADS: "1", PYTHONUNBUFFERED: "1"}}
roles:
  worker:
    instances: 2
    cpus: 1
    memory: 2G
    command: >-
      test ! -e {REPO}/README.md &&
      /usr/bin/python3 train.py --threads 1 --epochs 1 --train-limit 1500 --test-limit 300 --data-dir $SHOAL_TASK_DIR
""")
    result, job_id = with_images.run_job(spec, check=0)
    accuracies = []
    for index in (0, 1):
        log = with_images.logs(job_id, index=index)
        assert f"[rank {index}] world size 2," in log, log
        match = re.search(r"test accuracy: ([0-9.]+)%", log)
        assert match, log
        accuracies.append(match.group(1))
    assert accuracies[0] == accuracies[1], f"the ranks' models differ: {accuracies}"
    configs = list((with_images.home / "jobs" / job_id).glob("attempt-1/worker-*/.shoal-oci/0/config.json"))
    assert len(configs) == 2 and all(json.loads(c.read_text())["root"]["readonly"] for c in configs), configs
