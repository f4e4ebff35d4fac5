"""Queues, priorities, backfill and the reasons a job waits, on a real server with real
tasks: the server's queues.yaml, `shoal submit --queue/--priority/--estimate`, and what
`shoal status`, `shoal list` and `shoal queues` say."""
import json
import time

import pytest

from conftest import wait_for, write_spec

pytestmark = pytest.mark.slow

# A task that runs until the test creates "release-<name>" in the job's folder; a job
# that checkpoints (which credit needs, docs/scheduling.md) keeps them under ckpt-<name>.
HOLD = """
name: {name}
{checkpoint}roles:
  worker:
    instances: 1
    cpus: {cpus}
    memory: 32M
    command: while [ ! -e {folder}/release-{name} ]; do sleep 0.05; done
"""


def hold(tmp_path, name, cpus, checkpointed=False):
    checkpoint = f"checkpoint: {{uri: {tmp_path}/ckpt-{name}}}\n" if checkpointed else ""
    return write_spec(tmp_path, HOLD.format(name=name, cpus=cpus, folder=tmp_path, checkpoint=checkpoint),
                      name=f"{name}.yaml")


def release(tmp_path, name):
    (tmp_path / f"release-{name}").touch()


def reason(shoal, job_id):
    return wait_for(lambda: shoal.status(job_id).get("wait_reason"), 15, what=f"{job_id}'s wait reason")


# A job whose program notes SIGTERM in "terminated-<name>" (where a real one would
# checkpoint) and exits; on its second run it ends at once.
STEPS_ASIDE = """
name: {name}
queue: {queue}
priority: {priority}
max_attempts: 1
roles:
  worker:
    cpus: {cpus}
    memory: 32M
    command: >-
      if [ -e {folder}/terminated-{name} ]; then exit 0; fi;
      trap 'touch {folder}/terminated-{name}; exit 0' TERM;
      while true; do sleep 0.05; done
"""


def start_stepping_aside(shoal, tmp_path, name, queue, cpus, priority="normal"):
    """Submits a STEPS_ASIDE job and returns its id once its task has registered."""
    spec = write_spec(tmp_path, STEPS_ASIDE.format(name=name, queue=queue, priority=priority, cpus=cpus, folder=tmp_path),
                      name=f"{name}.yaml")
    job = shoal.submit(spec)
    shoal.wait_state(job, "RUNNING")
    wait_for(lambda: shoal.status(job)["attempts"][-1]["tasks"], 15, what=f"{name}'s task to register")
    return job


def serve(shoal, queues_yaml):
    """Starts a server of 4 CPUs with these queues."""
    (shoal.home / "queues.yaml").write_text(queues_yaml)
    shoal.start_server("--cpus", "4")


def test_a_queued_job_says_why_it_waits_and_priority_orders_the_queue(shoal, tmp_path):
    shoal.start_server("--cpus", "2")
    holder = shoal.submit(hold(tmp_path, "holder", 2))
    shoal.wait_state(holder, "RUNNING")
    low = shoal.submit(hold(tmp_path, "low", 2), "--priority", "low")
    high = shoal.submit(hold(tmp_path, "high", 2), "--priority", "high")
    assert reason(shoal, high).startswith("needs 2 CPUs (none free); starts when running jobs end (they have no "
                                          "estimates); first in queue default")
    assert "2nd in queue default, behind " + high in reason(shoal, low)
    status = shoal.run("status", low, check=0).stdout
    assert "  queue default, priority low\n" in status, status
    assert "  waiting: " in status, status
    listed = shoal.run("list", check=0).stdout
    assert listed.count("  waiting: ") == 2, listed
    # The holder ends: the high-priority job, submitted later, starts first.
    release(tmp_path, "holder")
    shoal.wait_state(high, "RUNNING")
    assert shoal.status(low)["state"] == "QUEUED"
    release(tmp_path, "high")
    shoal.wait_state(low, "RUNNING")
    assert shoal.status(low)["wait_reason"] == ""
    release(tmp_path, "low")
    shoal.wait_state(low, "SUCCEEDED")


def test_a_job_with_an_estimate_backfills_and_one_without_waits_behind_the_reserved_head(shoal, tmp_path):
    shoal.start_server("--cpus", "4")
    running = shoal.submit(hold(tmp_path, "running", 3), "--estimate", "1h")
    shoal.wait_state(running, "RUNNING")
    head = shoal.submit(hold(tmp_path, "head", 4))
    assert "expected to start around " in reason(shoal, head)
    short = shoal.submit(hold(tmp_path, "short", 1), "--estimate", "10m")
    shoal.wait_state(short, "RUNNING")  # ends, by its estimate, before the head can start
    release(tmp_path, "short")
    shoal.wait_state(short, "SUCCEEDED")
    endless = shoal.submit(hold(tmp_path, "endless", 1))
    assert reason(shoal, endless).startswith(f"fits now, but would delay {head}, which is reserved to start first "
                                             "(this job has no estimate")
    release(tmp_path, "running")
    shoal.wait_state(head, "RUNNING")
    release(tmp_path, "head")
    shoal.wait_state(endless, "RUNNING")
    release(tmp_path, "endless")
    shoal.wait_state(endless, "SUCCEEDED")


def test_queues_hold_their_limits_reload_and_refuse_what_could_never_run(shoal, tmp_path):
    serve(shoal, "max_wait: 2h\nqueues:\n  research: {guarantee: 50%, max: 50%}\n")
    table = shoal.run("queues", check=0).stdout
    assert table.splitlines()[1].split()[:3] == ["research", "50%", "50%"], table
    assert "a job waits at most max_wait 2h00m" in table, table

    first = shoal.submit(hold(tmp_path, "first", 2), "--queue", "research")
    shoal.wait_state(first, "RUNNING")
    second = shoal.submit(hold(tmp_path, "second", 1), "--queue", "research")
    assert reason(shoal, second) == ("queue research may use at most 2 CPUs (its max, 50% of the cluster) and uses 2; "
                                     "this job needs 1")
    other = shoal.submit(hold(tmp_path, "other", 1))  # the default queue is not held back by research's max
    shoal.wait_state(other, "RUNNING")
    queues = json.loads(shoal.run("queues", "--json", check=0).stdout)
    research = next(q for q in queues["queues"] if q["name"] == "research")
    assert research["used"]["cpus"] == 2 and research["waiting"] == [second], research

    # Bad input is refused at submit with the fix, and nothing is queued.
    jobs_before = json.loads(shoal.run("list", "--json", check=0).stdout)["total"]
    refused = shoal.run("submit", str(hold(tmp_path, "lost", 1)), "--queue", "nowhere")
    assert refused.returncode == 2, refused
    assert "no queue 'nowhere'; use one of: research, default" in refused.stderr, refused.stderr
    refused = shoal.run("submit", str(hold(tmp_path, "huge", 3)), "--queue", "research")
    assert refused.returncode == 2 and "more than queue research may ever use" in refused.stderr, refused.stderr
    refused = shoal.run("submit", str(hold(tmp_path, "rude", 1)), "--priority", "urgent")
    assert refused.returncode == 2 and "priority" in refused.stderr and "low, normal, high" in refused.stderr, refused.stderr
    assert json.loads(shoal.run("list", "--json", check=0).stdout)["total"] == jobs_before

    # A broken file is not taken: the queues in force stay, and `shoal queues` says why.
    (shoal.home / "queues.yaml").write_text("queues:\n  research: {guarantee: 50%, max: 40%}\n")
    table = wait_for(lambda: (t := shoal.run("queues", check=0).stdout) and "not reloaded" in t and t, 10,
                     what="the reload error")
    assert "queues.research.max is below its guarantee" in table, table
    # A file without research: its jobs are listed apart, the running one runs on, the
    # waiting one says why it cannot start.
    (shoal.home / "queues.yaml").write_text("queues:\n  prod: {guarantee: 50%}\n")
    gone = wait_for(lambda: json.loads(shoal.run("queues", "--json", check=0).stdout)["unconfigured"], 10,
                    what="research among the queues no longer configured")
    assert [(q["name"], q["running"], q["waiting"]) for q in gone] == [("research", 1, [second])], gone
    wait_for(lambda: "queue research is not configured on this server any more" in reason(shoal, second), 10,
             what=f"{second}'s reason to say its queue is gone")
    table = shoal.run("queues", check=0).stdout
    assert "queue research is no longer configured but holds jobs: 1 running" in table and second in table, table
    assert shoal.status(first)["state"] == "RUNNING"
    # A good one is, without a restart: research may now take the whole cluster.
    (shoal.home / "queues.yaml").write_text("queues:\n  research: {guarantee: 50%}\n")
    shoal.wait_state(second, "RUNNING")
    for name in ("first", "second", "other"):
        release(tmp_path, name)
    for job_id in (first, second, other):
        shoal.wait_state(job_id, "SUCCEEDED")


def test_the_server_refuses_to_start_with_a_queues_file_it_cannot_read(shoal):
    (shoal.home / "queues.yaml").write_text("queues:\n  a: {guarantee: 70%}\n  b: {guarantee: 50%}\n")
    result = shoal.run("server", "--home", str(shoal.home), "--port", "0", timeout=30)
    assert result.returncode == 2, result
    assert "queues.yaml:1: the queues' guarantees sum to 120%, past 100% of the cluster" in result.stderr, result.stderr
    assert not (shoal.home / "server.json").exists()


def test_a_borrowing_job_is_preempted_with_sigterm_and_runs_again_without_using_an_attempt(shoal, tmp_path):
    serve(shoal, "queues:\n  research: {guarantee: 50%}\n  batch: {guarantee: 50%}\n")
    borrower = start_stepping_aside(shoal, tmp_path, "batch", "batch", 4)  # the whole cluster
    owner = shoal.submit(hold(tmp_path, "owner", 2), "--queue", "research")
    queued = shoal.wait_state(borrower, "QUEUED", timeout=30)
    assert queued["attempts"][0]["state"] == "PREEMPTED", queued
    assert queued["message"].startswith(f"attempt 1 was preempted: {owner} of queue research, which is below its "
                                        "guarantee, needs its resources"), queued["message"]
    assert (tmp_path / "terminated-batch").exists(), "the program was told with SIGTERM before it was stopped"
    status = shoal.run("status", borrower, check=0).stdout
    assert "PREEMPTED" in status, status
    shoal.wait_state(owner, "RUNNING")
    release(tmp_path, "owner")
    done = shoal.wait_state(borrower, "SUCCEEDED", timeout=60)
    assert [a["state"] for a in done["attempts"]] == ["PREEMPTED", "SUCCEEDED"], done["attempts"]


def test_a_high_priority_job_preempts_lower_ones_of_its_queue_only_where_the_queue_allows_it(shoal, tmp_path):
    # Each queue may use 2 of the 4 CPUs (its max). A low-priority job holds 1.5 of them in
    # each; a high-priority job of 1 CPU fits the free room but not its queue's max.
    serve(shoal, "queues:\n"
                 "  research: {guarantee: 50%, max: 50%, preempt_lower_priority: true}\n"
                 "  batch: {guarantee: 50%, max: 50%}\n")
    low = {queue: start_stepping_aside(shoal, tmp_path, f"low-{queue}", queue, 1.5, "low") for queue in ("research", "batch")}
    high = {queue: shoal.submit(hold(tmp_path, f"high-{queue}", 1), "--queue", queue, "--priority", "high")
            for queue in ("research", "batch")}

    # research allows it: its low job is told with SIGTERM, steps aside, and runs again after.
    queued = shoal.wait_state(low["research"], "QUEUED", timeout=30)
    assert queued["attempts"][0]["state"] == "PREEMPTED", queued
    assert f"for {high['research']} (priority 100) in queue research, which allows preempting lower priorities" in \
        queued["message"], queued["message"]
    assert (tmp_path / "terminated-low-research").exists(), "the program was told with SIGTERM before it was stopped"
    shoal.wait_state(high["research"], "RUNNING")

    # batch does not: its high job waits at the max, and its low job runs on untouched.
    why = reason(shoal, high["batch"])
    assert "queue batch may use at most 2 CPUs (its max, 50% of the cluster) and uses 1.5" in why, why
    assert shoal.status(low["batch"])["state"] == "RUNNING"
    assert [a["state"] for a in shoal.status(low["batch"])["attempts"]] == ["RUNNING"]
    assert not (tmp_path / "terminated-low-batch").exists()

    release(tmp_path, "high-research")
    done = shoal.wait_state(low["research"], "SUCCEEDED", timeout=60)
    assert [a["state"] for a in done["attempts"]] == ["PREEMPTED", "SUCCEEDED"], done["attempts"]
    shoal.run("kill", low["batch"])
    release(tmp_path, "high-batch")
    shoal.wait_state(high["batch"], "SUCCEEDED", timeout=60)


def start_research_and_batch(shoal, tmp_path, batch, checkpointed=False):
    """research and batch are guaranteed 2 of 4 CPUs each; research's jobs take 1.5, so with
    one running the next would take it to 3. Starts research's first job, then batch's jobs
    ([(name, CPUs)], in order, checkpointing or not), each running before the next; returns
    their ids."""
    serve(shoal, "min_run_before_preemption: 3s\nqueues:\n  research: {guarantee: 50%}\n  batch: {guarantee: 50%}\n")
    jobs = []
    for name, cpus, queue in [("first", 1.5, "research")] + [(name, cpus, "batch") for name, cpus in batch]:
        jobs.append(shoal.submit(hold(tmp_path, name, cpus, checkpointed), "--queue", queue))
        shoal.wait_state(jobs[-1], "RUNNING")
    return jobs


def release_all(shoal, tmp_path, jobs):
    for name in jobs:
        release(tmp_path, name)
    for job in jobs.values():
        shoal.wait_state(job, "SUCCEEDED", timeout=90)


def test_a_queue_held_below_its_guarantee_by_the_size_of_its_jobs_runs_one_beyond_it_on_credit(shoal, tmp_path):
    # batch borrows the rest with two jobs (its only job would be spared).
    first, kept, borrower = start_research_and_batch(shoal, tmp_path, [("kept", 1), ("borrower", 1.5)])
    second = shoal.submit(hold(tmp_path, "second", 1.5, checkpointed=True), "--queue", "research")
    # It waits as a borrower while its queue gains credit, then takes back what batch borrowed.
    owed = wait_for(lambda: (t := shoal.run("queues", check=0).stdout) and "queue research is owed" in t and t, 30,
                    what="research's credit in shoal queues")
    assert "its next job may start beyond its guarantee" in owed, owed
    shoal.wait_state(second, "RUNNING", timeout=60)
    taken = shoal.status(borrower)["attempts"][0]
    assert taken["state"] == "PREEMPTED", taken
    assert f"{second} of queue research, which is below its guarantee, needs its resources" in taken["message"], taken
    assert shoal.status(kept)["state"] == "RUNNING"
    release_all(shoal, tmp_path, {"first": first, "second": second, "kept": kept, "borrower": borrower})


def test_a_queue_on_credit_takes_from_a_queue_at_its_guarantee_when_nothing_is_lent(shoal, tmp_path):
    # batch holds exactly its 2 CPUs, so nothing is lent. research's second job waits while
    # research gains credit, then takes batch's most served job; batch waits below its
    # guarantee while research spends its credit.
    first, older, newer = start_research_and_batch(shoal, tmp_path, [("older", 1), ("newer", 1)], checkpointed=True)
    second = shoal.submit(hold(tmp_path, "second", 1.5, checkpointed=True), "--queue", "research")
    shoal.wait_state(second, "RUNNING", timeout=60)
    taken = shoal.status(older)["attempts"][0]
    assert taken["state"] == "PREEMPTED", taken
    assert f"{second} of queue research runs on the credit its queue is owed" in taken["message"], taken
    assert "queue batch was at its guarantee or beyond" in taken["message"], taken
    assert shoal.status(newer)["attempts"][0]["state"] == "RUNNING"
    release_all(shoal, tmp_path, {"first": first, "second": second, "older": older, "newer": newer})


def test_a_job_that_keeps_no_checkpoint_does_not_start_on_credit_and_says_why(shoal, tmp_path):
    # As in the test above, but research's second job keeps no checkpoint: taken back when
    # the credit is spent, it would start over at every turn, so it waits as a borrower.
    first, kept, borrower = start_research_and_batch(shoal, tmp_path, [("kept", 1), ("borrower", 1.5)])
    second = shoal.submit(hold(tmp_path, "second", 1.5), "--queue", "research")
    # The reason names the checkpoint once the credit would cover the job (where a job that
    # checkpoints starts, as in the test above); a few passes later nothing has moved.
    why = wait_for(lambda: (r := reason(shoal, second)) and "keeps no checkpoint" in r and r, 30,
                   what="the wait reason to name the missing checkpoint")
    assert "so it does not start on credit" in why and "give it a `checkpoint:`" in why, why
    time.sleep(2)
    assert "queue research is owed" in shoal.run("queues", check=0).stdout
    assert [shoal.status(job)["state"] for job in (second, kept, borrower)] == ["QUEUED", "RUNNING", "RUNNING"]
    assert shoal.status(borrower)["attempts"][0]["state"] == "RUNNING"
    release_all(shoal, tmp_path, {"first": first, "kept": kept, "borrower": borrower, "second": second})


def test_a_queue_guaranteed_less_than_one_job_takes_back_room_for_one_job_and_keeps_it(shoal, tmp_path):
    # tiny is guaranteed 0.4 of 4 CPUs; its jobs take 1. big (3.6) borrows all four.
    serve(shoal, "queues:\n  tiny: {guarantee: 10%}\n  big: {guarantee: 90%}\n")
    big = [shoal.submit(hold(tmp_path, f"big{i}", 1), "--queue", "big") for i in range(4)]
    for job in big:
        shoal.wait_state(job, "RUNNING")
    tiny = shoal.submit(hold(tmp_path, "tiny", 1), "--queue", "tiny")
    shoal.wait_state(tiny, "RUNNING", timeout=60)
    # big gave up one job, its youngest, which waits again; tiny keeps its one job.
    taken = wait_for(lambda: [j for j in big if shoal.status(j)["state"] == "QUEUED"], 30, what="a big job requeued")
    assert taken == [big[-1]], taken
    assert "queue big was using more than its guarantee" in shoal.status(big[-1])["attempts"][0]["message"]
    assert "uses 3 of its guaranteed 3.6 CPUs" in reason(shoal, big[-1]), reason(shoal, big[-1])
    assert shoal.status(tiny)["state"] == "RUNNING"
    for name in ["tiny", "big0", "big1", "big2", "big3"]:
        release(tmp_path, name)
    for job in [tiny, *big]:
        shoal.wait_state(job, "SUCCEEDED", timeout=60)
