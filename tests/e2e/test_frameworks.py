"""Each framework's distributed mode, with programs that use the variables exactly as the
framework's own launcher would set them."""
import hashlib
import os
import re
from pathlib import Path

import pytest

from conftest import REPO, write_spec

pytestmark = pytest.mark.slow
PROGRAMS = Path(__file__).parent / "programs"


def tasks_of(detail):
    return {(t["role"], t["index"]): t for t in detail["attempts"][-1]["tasks"]}


def test_tensorflow_cluster_fully_connects_and_ps_is_stopped(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, f"""
name: tf-probe
framework: tensorflow
roles:
  chief:  {{instances: 1, cpus: 0.25, memory: 64M, command: /usr/bin/python3 {PROGRAMS}/tf_config_probe.py}}
  worker: {{instances: 3, cpus: 0.25, memory: 64M, command: /usr/bin/python3 {PROGRAMS}/tf_config_probe.py}}
  ps:     {{instances: 2, cpus: 0.25, memory: 64M, command: /usr/bin/python3 {PROGRAMS}/tf_config_probe.py}}
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=120)
    tasks = tasks_of(shoal.status(job_id))
    for role, count in (("chief", 1), ("worker", 3), ("ps", 2)):
        for index in range(count):
            log = shoal.logs(job_id, role=role, index=index)
            assert f"{role}:{index} reached 5 of 5 peers" in log, log
            assert f"{role}:{index} heard from 5 peers" in log, log
    assert tasks[("ps", 0)]["state"] == "KILLED" and tasks[("ps", 1)]["state"] == "KILLED"
    assert "stopped after every worker finished" in tasks[("ps", 0)]["message"]
    assert shoal.job_processes(job_id) == []


def test_mxnet_servers_and_workers_reach_the_scheduler(shoal, tmp_path):
    shoal.start_server()
    command = f"/usr/bin/python3 {PROGRAMS}/mxnet_probe.py"
    spec = write_spec(tmp_path, f"""
name: mxnet-probe
framework: mxnet
roles:
  scheduler: {{cpus: 0.25, memory: 64M, command: {command}}}
  server: {{instances: 2, cpus: 0.25, memory: 64M, command: {command}}}
  worker: {{instances: 2, cpus: 0.25, memory: 64M, command: {command}}}
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=120)
    scheduler_log = shoal.logs(job_id, role="scheduler")
    assert "all 4 registered: ['server:0', 'server:1', 'worker:0', 'worker:1']" in scheduler_log
    for index in (0, 1):
        assert "registered with the scheduler" in shoal.logs(job_id, role="worker", index=index)
    tasks = tasks_of(shoal.status(job_id))
    assert tasks[("scheduler", 0)]["state"] == "KILLED" and tasks[("server", 1)]["state"] == "KILLED"
    assert shoal.job_processes(job_id) == []


@pytest.mark.parametrize("workers", [2, 3])
def test_xgboost_workers_train_one_model_through_shoals_tracker(shoal, workers):
    shoal.start_server()
    _, job_id = shoal.run_job(REPO / "examples/xgboost-distributed/job.yaml", "--instances", f"worker={workers}",
                              check=0, timeout=120)
    digests = set()
    for index in range(workers):
        log = shoal.logs(job_id, index=index)
        assert f"rank {index} of {workers}" in log, log
        digests.add(re.search(r"model sha256: ([0-9a-f]+)", log).group(1))
        model = Path(shoal.home / "jobs" / job_id / "attempt-1" / f"worker-{index}" / f"model-{index}.json")
        assert hashlib.sha256(model.read_bytes()).hexdigest() in digests
    assert len(digests) == 1, "every rank must end with the identical model"


@pytest.mark.parametrize("label,text,message", [
    ("unknown framework", "framework: theano\nroles: {worker: {command: 'true'}}", "unknown framework 'theano'"),
    ("a role tensorflow does not know", "framework: tensorflow\nroles: {worker: {command: 'true'}, scheduler: {command: 'true'}}",
     "tensorflow jobs have no role 'scheduler'"),
    ("tensorflow without workers", "framework: tensorflow\nroles: {ps: {command: 'true'}}", "needs a 'worker' role"),
    ("mxnet without a scheduler", "framework: mxnet\nroles: {worker: {command: 'true'}}", "needs a 'scheduler' role"),
])
def test_framework_mistakes_are_refused_before_anything_starts(shoal, tmp_path, label, text, message):
    result = shoal.run("run", str(write_spec(tmp_path, text)))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (shoal.home / "server.json").exists()


def test_pytorch_with_two_processes_per_task(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, f"""
name: nproc
framework: pytorch
env: {{OMP_NUM_THREADS: "1"}}
roles:
  worker:
    instances: 2
    nproc_per_node: 2
    cpus: 0.5
    memory: 512M
    command: /usr/bin/python3 {PROGRAMS}/torch_allreduce.py
""")
    _, job_id = shoal.run_job(spec, check=0, timeout=180)
    seen = set()
    for task in (0, 1):
        log = shoal.logs(job_id, index=task)
        for local in (0, 1):
            rank = task * 2 + local
            line = (f"[{local}] rank={rank} local_rank={local} local_world_size=2 group_rank={task} "
                    f"world_size=4 sum=6")
            assert line in log, log
            seen.add(rank)
    assert seen == {0, 1, 2, 3}


def test_one_failing_process_fails_its_task_and_stops_the_other(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: nproc-fails
roles:
  worker:
    nproc_per_node: 2
    cpus: 0.5
    memory: 64M
    command: 'if [ "$SHOAL_LOCAL_RANK" = 1 ]; then echo broken >&2; exit 3; fi; sleep 300'
""")
    result, job_id = shoal.run_job(spec, check=1, timeout=60)
    assert "local rank 1 exit code 3: broken" in result.stderr
    assert shoal.job_processes(job_id) == []


def test_mpi_ranks_start_through_shoals_containers_and_allreduce(shoal):
    shoal.start_server()
    _, job_id = shoal.run_job(REPO / "examples/mpi-allreduce/job.yaml", check=0, timeout=120)
    mpirun_log = (shoal.home / "jobs" / job_id / "attempt-1" / "mpirun.log").read_text()
    for rank in range(3):
        # each rank's output is in its own task's log, as `shoal logs` and the UI show it
        line = f"rank {rank} of 3 in task {rank}: sum 6"
        assert line in shoal.logs(job_id, index=rank), shoal.log_tails()
        assert line not in mpirun_log, mpirun_log
    # the AM's own log, where mpirun's start is noted
    assert "mpirun started" in shoal.logs(job_id, role="am"), shoal.log_tails()
    assert all(t["state"] == "SUCCEEDED" for t in shoal.status(job_id)["attempts"][-1]["tasks"])
    assert shoal.job_processes(job_id) == []


def test_each_mpi_task_runs_open_mpi_in_a_session_folder_of_its_own(shoal):
    # Open MPI uses whatever folder its session base names, whoever made it: a name known
    # in advance in the shared /tmp could be made first by another account. Each task's
    # base is made for it (mkdtemp, mode 0700, the task's account) and goes with the task.
    shoal.start_server()
    show = 'worker=sh -c \'stat -c "base %a %U %n" "$OMPI_MCA_orte_tmpdir_base"\''
    _, job_id = shoal.run_job(REPO / "examples/mpi-allreduce/job.yaml", "--command", show, check=0, timeout=120)
    bases = []
    for rank in range(3):
        lines = [line for line in shoal.logs(job_id, index=rank).splitlines() if line.startswith("base ")]
        assert len(lines) == 1, shoal.log_tails()
        mode, owner, path = lines[0].split()[1:]
        assert (mode, owner) == ("700", "root") and re.fullmatch(r"/tmp/shoal-mpi-\w{6}", path), lines[0]
        bases.append(path)
    assert len(set(bases)) == 3, bases
    assert not any(os.path.exists(path) for path in bases), "each goes with its task"


def test_a_dying_mpi_rank_fails_the_job_naming_it_and_leaves_nothing(shoal):
    shoal.start_server()
    # The other ranks would wait in their allreduce for ever: the job ends because Shoal
    # stops them once rank 1 died (they are KILLED, not failed by a timeout of their own).
    result, job_id = shoal.run_job(REPO / "examples/mpi-allreduce/job.yaml", "--command",
                                   "worker=/usr/bin/python3 allreduce.py --fail-rank 1", check=1, timeout=120)
    assert "FAILED" in result.stderr
    assert "worker[1] failed: MPI rank 1 exited with code 3" in result.stderr, result.stderr
    status = shoal.status(job_id)
    assert status["message"].startswith("task worker[1] failed: MPI rank 1 exited with code 3"), status["message"]
    states = {t["index"]: t for t in status["attempts"][-1]["tasks"]}
    assert states[1]["state"] == "FAILED" and states[1]["exit_code"] == 3, states[1]
    assert states[0]["state"] == "KILLED" and states[2]["state"] == "KILLED", states
    assert shoal.job_processes(job_id) == []
