"""Checkpoints Shoal manages and preemption that loses no work, on a real server with real
programs: a job of queue batch borrows the whole cluster, a high-priority job of queue
research takes its share back; the borrower's programs are told (SIGTERM and the
preemption file), checkpoint within their grace, and the next attempt resumes from the
checkpoint Shoal restored. A PyTorch DDP job ends with the parameters of an uninterrupted
run; `shoal train`, preempted twice, with the bytes of one never preempted."""
import json
import os
from pathlib import Path

import pytest

from conftest import SHOAL, wait_for, write_spec
from test_train import EXAMPLE

pytestmark = pytest.mark.slow
PROGRAMS = Path(__file__).parent / "programs"
QUEUES = "queues:\n  research: {guarantee: 50%}\n  batch: {guarantee: 50%}\n"

# The job that takes research's share back: it holds 2 CPUs until the test releases it.
OWNER = """
name: owner
queue: research
priority: high
roles:
  worker:
    cpus: 2
    memory: 32M
    command: while [ ! -e {folder}/release-owner ]; do sleep 0.05; done
"""


def counter_spec(tmp_path, name, cpus, head="", keep=3):
    """A job of one checkpointed_counter.py task counting to 400, its events in
    tmp_path/events, its checkpoints under tmp_path/ckpt; `head`: more lines of the spec."""
    return write_spec(tmp_path, f"""
name: {name}
{head}checkpoint: {{path: state, uri: {tmp_path}/ckpt, keep: {keep}}}
env: {{EVENTS: {tmp_path / "events"}, TOTAL: "400"}}
roles:
  worker:
    cpus: {cpus}
    memory: 64M
    command: /usr/bin/python3 {PROGRAMS}/checkpointed_counter.py
""", name=f"{name}.yaml")


def take_back(shoal, tmp_path, borrower, progress):
    """Once the borrower has made `progress`, submits the owner; returns its id once the
    borrower has been preempted back to its queue."""
    wait_for(lambda: shoal.status(borrower)["progress"] >= progress, 120, what=f"{borrower} to make progress")
    owner = shoal.submit(write_spec(tmp_path, OWNER.format(folder=tmp_path), name="owner.yaml"))
    queued = shoal.wait_state(borrower, "QUEUED", timeout=90)
    assert queued["attempts"][-1]["state"] == "PREEMPTED", queued["attempts"]
    shoal.wait_state(owner, "RUNNING")
    return owner


def release_owner(shoal, tmp_path, owner):
    (tmp_path / "release-owner").touch()
    shoal.wait_state(owner, "SUCCEEDED")
    (tmp_path / "release-owner").unlink()


def rounds(folder: Path):
    """The complete checkpoint rounds in a task's folder of the checkpoint URI."""
    return sorted(p.parent.name for p in folder.glob("*/_SUCCESS"))


def test_a_preempted_program_is_told_checkpoints_in_its_grace_and_resumes_where_it_stopped(shoal, tmp_path):
    (shoal.home / "queues.yaml").write_text(QUEUES)
    shoal.start_server("--cpus", "4")
    events = tmp_path / "events"
    spec = counter_spec(tmp_path, "counter", 4, "queue: batch\npreemption_grace: 20s\n", keep=2)
    borrower = shoal.submit(spec)
    owner = take_back(shoal, tmp_path, borrower, 0.3)
    lines = events.read_text().splitlines()
    assert lines[0] == "start 0", lines
    stop = lines[1].split(" ", 2)
    assert stop[0] == "stop", lines
    stopped_at = int(stop[1])
    notice = json.loads(stop[2])
    assert notice.startswith("SHOAL_PREEMPTED=1\nSHOAL_PREEMPTED_REASON="), notice
    assert f"{owner} of queue research" in notice and "SHOAL_PREEMPTION_DEADLINE=" in notice, notice
    status = shoal.run("status", borrower, check=0).stdout
    assert "PREEMPTED" in status, status

    release_owner(shoal, tmp_path, owner)
    done = shoal.wait_state(borrower, "SUCCEEDED", timeout=120)
    assert [a["state"] for a in done["attempts"]] == ["PREEMPTED", "SUCCEEDED"], done["attempts"]
    lines = events.read_text().splitlines()
    assert lines[2:] == [f"start {stopped_at}", "done 400"], "the second attempt starts where the first stopped"
    # Shoal's notes in the task logs: what it uploaded, and what the next attempt restored.
    first = shoal.logs(borrower, attempt=1)
    assert "==== shoal: checkpoint round 1 uploaded to " in first, first
    second = shoal.logs(borrower, attempt=2)
    assert "==== shoal: restored checkpoint round " in second, second
    # keep: 2 complete rounds at most, and nothing half-written left beside them.
    task_folder = tmp_path / "ckpt" / borrower / "worker-0"
    kept = rounds(task_folder)
    assert 1 <= len(kept) <= 2, kept
    assert sorted(p.name for p in task_folder.iterdir()) == kept, list(task_folder.iterdir())
    assert sorted(p.name for p in (task_folder / kept[-1]).iterdir()) == ["_SUCCESS", "state.json"]


def test_a_retried_attempt_resumes_from_the_newest_complete_checkpoint(shoal, tmp_path):
    shoal.start_server()
    events = tmp_path / "events"
    spec = write_spec(tmp_path, f"""
name: crashes-once
max_attempts: 2
checkpoint: {{uri: {tmp_path}/ckpt}}
env: {{EVENTS: {events}, TOTAL: "200", FAIL_ONCE_AT: "120", FAILED_FLAG: {tmp_path}/failed}}
roles:
  worker:
    memory: 64M
    command: /usr/bin/python3 {PROGRAMS}/checkpointed_counter.py
""")
    result, job_id = shoal.run_job(spec, check=0, timeout=120)
    done = shoal.status(job_id)
    assert [a["state"] for a in done["attempts"]] == ["FAILED", "SUCCEEDED"], done["attempts"]
    # Checkpointed every 50 steps: the retry starts from step 100, not from 0.
    assert events.read_text().splitlines() == ["start 0", "crash 120", "start 100", "done 200"]


def ddp_spec(tmp_path, name, final, queue="default"):
    return write_spec(tmp_path, f"""
name: {name}
framework: pytorch
queue: {queue}
checkpoint: {{path: ckpt, uri: file://{tmp_path}/ddp-ckpt, keep: 2}}
env: {{OMP_NUM_THREADS: "1", FINAL: {final}, STEPS: "300"}}
roles:
  worker:
    instances: 2
    cpus: 2
    memory: 1G
    command: /usr/bin/python3 {PROGRAMS}/ddp_checkpointed.py
""", name=f"{name}.yaml")


def test_a_pytorch_ddp_job_preempted_mid_run_ends_with_the_parameters_of_an_uninterrupted_run(shoal, tmp_path):
    import torch

    (shoal.home / "queues.yaml").write_text(QUEUES)
    shoal.start_server("--cpus", "4")
    straight = shoal.submit(ddp_spec(tmp_path, "straight", tmp_path / "straight.pt"))
    shoal.wait_state(straight, "SUCCEEDED", timeout=180)

    borrower = shoal.submit(ddp_spec(tmp_path, "preempted", tmp_path / "preempted.pt", queue="batch"))
    owner = take_back(shoal, tmp_path, borrower, 0.4)
    first = shoal.logs(borrower, attempt=1)
    assert "rank 0 preempted at step " in first, first
    release_owner(shoal, tmp_path, owner)
    done = shoal.wait_state(borrower, "SUCCEEDED", timeout=180)
    assert [a["state"] for a in done["attempts"]] == ["PREEMPTED", "SUCCEEDED"], done["attempts"]
    second = shoal.logs(borrower, attempt=2)
    stopped = int(first.split("rank 0 preempted at step ")[1].split()[0])
    assert f"rank 0 starts at step {stopped}" in second, second  # nothing lost
    a = torch.load(tmp_path / "straight.pt")
    b = torch.load(tmp_path / "preempted.pt")
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


@pytest.mark.skipif("ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ,
                    reason="sanitizer builds leave shoal-train (LibTorch) out")
def test_shoal_train_preempted_twice_ends_byte_identical_to_a_run_never_preempted(shoal, tmp_path):
    (shoal.home / "queues.yaml").write_text(QUEUES)
    shoal.start_server("--cpus", "4")
    conf = tmp_path / "solver.prototxt"
    conf.write_text((EXAMPLE / "lenet_solver.prototxt").read_text()
                    .replace('net: "lenet_train_test.prototxt"', f'net: "{EXAMPLE}/lenet_train_test.prototxt"')
                    .replace("max_iter: 1000", "max_iter: 800").replace("snapshot: 500", "snapshot: 100")
                    .replace("test_interval: 500", "test_interval: 100000"))

    def spec(name, queue):
        out = tmp_path / name
        return write_spec(tmp_path, f"""
name: {name}
framework: shoal-train
queue: {queue}
checkpoint: {{uri: {tmp_path}/train-ckpt, keep: 2}}
env: {{OMP_NUM_THREADS: "1"}}
roles:
  worker:
    instances: 2
    cpus: 2
    memory: 2G
    command: {SHOAL} train -train -conf {conf} -model {out}/lenet.caffemodel
""", name=f"{name}.yaml"), out

    straight_spec, straight_out = spec("straight", "default")
    straight = shoal.submit(straight_spec)
    shoal.wait_state(straight, "SUCCEEDED", timeout=400)

    preempted_spec, preempted_out = spec("preempted", "batch")
    borrower = shoal.submit(preempted_spec)
    for progress in (0.2, 0.6):  # reported every 100 iterations
        owner = take_back(shoal, tmp_path, borrower, progress)
        release_owner(shoal, tmp_path, owner)
    done = shoal.wait_state(borrower, "SUCCEEDED", timeout=400)
    assert [a["state"] for a in done["attempts"]] == ["PREEMPTED", "PREEMPTED", "SUCCEEDED"], done["attempts"]
    for attempt in (2, 3):
        log = shoal.logs(borrower, attempt=attempt)
        assert "Resuming from " in log and "==== shoal: restored checkpoint round " in log, log
    first = shoal.logs(borrower, attempt=1)
    assert "stopped by SIGTERM at iteration " in first, first
    assert (preempted_out / "lenet.caffemodel").read_bytes() == (straight_out / "lenet.caffemodel").read_bytes()


def test_an_unwritable_checkpoint_folder_and_a_grace_past_the_servers_are_refused_at_submit(shoal, tmp_path):
    (shoal.home / "queues.yaml").write_text("max_preemption_grace: 1m\n")
    shoal.start_server()
    cases = [
        ("checkpoint: {uri: /proc/shoal-checkpoints}\n", "checkpoint.uri: cannot write to '/proc/shoal-checkpoints'"),
        (f"checkpoint: {{uri: {shoal.home}}}\n", "is the server's home"),
        ("preemption_grace: 2m\n", "preemption_grace: 2m00s is longer than this server allows (1m00s"),
        ("checkpoint: {uri: /tmp/c, keep: 0}\n", "checkpoint.keep: must be between 1 and 1000"),
    ]
    for extra, expected in cases:
        spec = write_spec(tmp_path, "roles: {worker: {command: 'true', memory: 32M}}\n" + extra)
        result = shoal.run("submit", str(spec))
        assert result.returncode == 2, (extra, result)
        assert expected in result.stderr, (extra, result.stderr)
    assert json.loads(shoal.run("list", "--json", check=0).stdout)["total"] == 0, "nothing was queued"


def test_a_new_job_preempts_a_more_served_one_of_its_queue_which_resumes_from_its_checkpoint(shoal, tmp_path):
    # Attained service is on by default; tiny levels and no minimum run make it quick here.
    (shoal.home / "queues.yaml").write_text("service_levels: [0.001]\nmin_run_before_preemption: 0s\n")
    shoal.start_server("--cpus", "2")
    events = tmp_path / "events"
    long_one = shoal.submit(counter_spec(tmp_path, "long-one", 2))
    # 0.001 CPU-hours at 2 CPUs is 1.8 s of service: by 30% it is at level 1.
    wait_for(lambda: shoal.status(long_one)["progress"] >= 0.3, 120, what=f"{long_one} to make progress")
    fresh = shoal.submit(write_spec(tmp_path, """
name: fresh
roles:
  worker:
    cpus: 2
    memory: 32M
    command: "true"
""", name="fresh.yaml"))
    # The fresh job runs for a moment only: the long one may already be back by the next look.
    preempted = wait_for(lambda: (s := shoal.status(long_one)) and len(s["attempts"]) > 1 and s["attempts"][0],
                         90, what=f"{long_one} to be preempted")
    assert preempted["state"] == "PREEMPTED", preempted
    assert f"for {fresh} in queue default, which has had less service (level 0 against 1)" in \
        preempted["message"], preempted
    shoal.wait_state(fresh, "SUCCEEDED")
    done = shoal.wait_state(long_one, "SUCCEEDED", timeout=120)
    assert [a["state"] for a in done["attempts"]] == ["PREEMPTED", "SUCCEEDED"], done["attempts"]
    lines = events.read_text().splitlines()
    stopped_at = int(lines[1].split(" ", 2)[1])
    assert stopped_at > 0 and lines[2:] == [f"start {stopped_at}", "done 400"], lines
