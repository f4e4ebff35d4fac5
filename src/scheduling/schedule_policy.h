// SchedulePolicy: which queued jobs start now, and why each of the others waits. A pure
// function over plain data, so the policy is tested with tables and replayed on a trace
// (bench/schedule) with no processes; the server's scheduler only applies its decisions.
//
// Contract:
//  - Gangs: a job starts with all its tasks at once or not at all; GPUs are concrete
//    devices, each admitted task gets `gpus` distinct free indices, lowest first.
//  - Order (kFairShare): jobs that have waited past their bound come first, oldest first,
//    when starting them keeps their queue within its guarantee (or the queue is guaranteed
//    the whole cluster). The bound: `max_wait` for a job that has never run;
//    `max_wait_to_resume` for one that has (a retry, a resume after preemption), counted
//    over every wait since its first start. Then queues take turns: the next job comes from the queue that would be
//    furthest below its guarantee with that job started (its dominant share of the
//    cluster divided by its guaranteed share, lowest first), and within a queue by priority (highest first), then the user with the
//    smallest dominant share in that queue, then submission time, then id. Shares are
//    recounted after every admission. kFifo orders by submission time only and ignores
//    queues' guarantees (the baseline the benchmark compares with).
//  - Limits: a queue never uses more than its `max` share in any resource; a user never
//    more than the queue's `user_limit`. A job over its user's limit is skipped (others'
//    jobs go on); a job over its queue's max stops that queue for this pass.
//  - Backfill (conservative): a job that does not fit now gets a reservation, the
//    earliest time it fits given the estimated ends of running jobs and the reservations
//    made before it (up to `max_reservations`; later jobs get none). A job starts now only
//    if it fits now and its estimated run (forever when it has no estimate) delays no
//    reservation. With backfill off, the first job that does not fit stops the pass
//    (strict FIFO's head-of-line blocking). A job that would take its queue beyond its
//    guarantee (kFairShare; not a queue's one job, below) gets no reservation: it borrows,
//    runs on what is free at its turn (or what its queue's credit takes back, below), and
//    holds back no job behind it. (Reserving for it idled GPUs for days on the trace
//    replay: an 8-GPU job of a queue at 16 of its 18 GPUs held free GPUs it could not use.)
//  - No starvation, for a job its queue's guarantee holds: once it has waited past its
//    bound, it is ordered before every job that has not, and nothing that starts after
//    that delays its reservation; it starts at the latest when the jobs running at that
//    moment have ended (their estimates bound it where they have them) and the aged jobs
//    before it have run. A job that has run and waited past `max_wait_to_resume` then runs
//    to its end: service never preempts it again. A job that would take its queue beyond
//    its guarantee runs only on what other queues leave idle: under sustained overload it
//    has no such bound.
//  - Preemption (kFairShare, when `preemption` is on): when the first job of a queue that is
//    below its guarantee cannot start for want of free resources, and starting it would
//    keep its queue within its guarantee, running jobs of queues above their guarantees
//    (borrowers) are chosen to make room: lowest priority first, then the youngest, and
//    only as many as the job needs; a queue gives up jobs only while it is above its
//    guarantee. Nothing is chosen when all the borrowers' jobs together would not make
//    room. Jobs already being preempted count as room on their way. When starting the
//    job would take its queue (below its guarantee now) beyond its guarantee, to R times
//    it in dominant share, the same rule takes back only from queues that stay at R times
//    their own guarantees or more without the jobs taken (queues with no guarantee
//    always): they cannot take back in turn.
//  - One job for every queue: a queue with a guarantee that runs no job may start one of
//    at most twice its guarantee, rounded up to one GPU (one CPU on a cluster without
//    GPUs), as if within its guarantee: in the queues' turns it goes after every job that
//    keeps its own queue within its guarantee and before every other borrower, it takes
//    back lent capacity for it and holds a reservation; and while that is the queue's
//    only job, it is not taken back for a job beyond its own queue's guarantee (a job
//    within its guarantee takes back even that). A guarantee smaller than one job is so
//    rounded up to one job at a time.
//  - Credit (ScheduleInput::queue_credit, kept by scheduling/queue_credit.h): a queue held
//    below its guarantee because its waiting jobs are too large to start within it gains
//    credit. While it is below its guarantee and has credit enough to hold its next job
//    beyond its guarantee for `min_run_before_preemption_ms` (so that queues do not take
//    turns at every pass), and that job checkpoints (credit moves jobs in turns, and a job
//    without a checkpoint would start over at each), that job goes in the queues' turns by
//    its queue's dominant share over its guarantee without it (as if within its guarantee),
//    and takes back lent capacity for it as a queue's one job does; it reserves nothing.
//    When what is lent does not make room, it takes running jobs of queues at or above their
//    guarantees that have no credit, checkpoint and have run `min_run_before_preemption_ms`
//    in their attempt, the most served first, never a queue's only job within its one-job
//    allowance. While a queue has credit, no job takes back its running jobs, not even one
//    within its own queue's guarantee. Beyond its guarantee, the queue pays its credit back;
//    its guarantee so holds on average over time.
//  - Preemption by priority (kFairShare, when `preemption` is on and the queue has
//    `preempt_lower_priority`): when a queue's first job that lacks room (in the queue's
//    order) still lacks it after the rule above, running jobs of the same queue with a
//    strictly lower priority than that job are chosen: lowest priority first, then the
//    youngest, only as many as it needs, none already being preempted. Nothing is chosen
//    when all of them together with what is free would not make room. The same holds for
//    the first job that its queue's `max` holds back, and for each user's first job that
//    the queue's `user_limit` holds back, though room may be free: the lower-priority jobs
//    counted against that limit (the user's own, for a user limit) are chosen until the
//    job fits the limit as well as the room. Off by default.
//  - Attained service (kFairShare, when `service_levels` is not empty): a job's service is
//    what it has held so far, in size x time (size: its GPUs, or its CPUs when it has
//    none), over all its attempts; the thresholds cut it into levels (level 0 below the
//    first). Within a queue, jobs of equal priority go by level, lowest first (the
//    least-attained-service order, which finishes short jobs first without knowing any
//    job's length). With preemption on, a queue's first job that lacks room (after the
//    rules above) preempts running jobs of its queue with the same priority and a higher
//    level that checkpoint and have run at least `min_run_before_preemption_ms` in their attempt:
//    the most served first, only as many as it needs. A job that started
//    for having waited past `max_wait_to_resume` is never preempted this way. Only jobs
//    that checkpoint (docs/checkpoints.md) are: a preempted attempt loses what it did
//    since its checkpoint. On by default (DefaultServiceLevels()).
//  - Every queued job that does not start gets a reason, in words a user reads in
//    `shoal status` ("needs 4 CPUs, 1.5 free; 2nd in queue research behind job-41").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spec/resources.h"

namespace shoal {

// One queue as the server's configuration defines it. Shares are fractions of the
// cluster's capacity, the same for CPUs, memory and GPUs.
struct QueueSpec {
  std::string name;
  double guarantee = 0;  // 0..1
  double max = 1;        // guarantee..1: what it may borrow up to
  // Per user inside the queue; a component of 0 means no limit on it.
  Resources user_limit;
  // Its first job that lacks room may preempt its running jobs of lower priority.
  bool preempt_lower_priority = false;
  // On Slurm: the partition and QOS its jobs ask for, unless a job's own slurm: section
  // names them ("": the server's).
  std::string slurm_partition;
  std::string slurm_qos;
};

enum class OrderPolicy { kFairShare, kFifo };

// 0.1, 0.5, 2, 8 and 32 GPU-hours (CPU-hours for jobs without GPUs), in size x milliseconds:
// Shoal's default service levels, as replayed in bench/schedule.
std::vector<double> DefaultServiceLevels();

struct SchedulingConfig {
  std::vector<QueueSpec> queues;  // always holds "default"
  OrderPolicy order = OrderPolicy::kFairShare;
  bool backfill = true;
  bool preemption = true;  // take lent capacity back; preempt by priority where a queue allows (kFairShare only)
  int64_t max_wait_ms = 3600 * 1000;  // the starvation bound for a job's first start: see the contract
  // The starvation bound for a job that has run, over all its waits since its first start.
  int64_t max_wait_to_resume_ms = int64_t{72} * 3600 * 1000;
  // The longest preemption_grace a job may ask for (refused at submit beyond it).
  int64_t max_preemption_grace_ms = 10 * 60 * 1000;
  int max_reservations = 64;
  // Attained-service levels (see the contract), in size x milliseconds, ascending; empty: off.
  std::vector<double> service_levels = DefaultServiceLevels();
  int64_t min_run_before_preemption_ms = 10 * 60 * 1000;

  const QueueSpec* FindQueue(const std::string& name) const;
};

// A job waiting to start.
struct PendingJob {
  std::string id;
  std::string user;
  std::string queue = "default";
  int priority = 0;
  int64_t submitted_ms = 0;
  std::vector<Resources> tasks;  // one entry per task, in rank order
  int64_t estimate_ms = 0;       // how long it runs, as declared (timeouts.job or estimate); 0: unknown
  double attained = 0;           // service in earlier attempts, size x ms (see service_levels)
  // For the starvation bound: whether an earlier attempt of it ran, and then how long it
  // has waited in all since its first start, this wait included.
  bool has_run = false;
  int64_t waited_since_first_run_ms = 0;
  bool checkpointed = false;  // Shoal keeps its checkpoints: only such a job starts on its queue's credit
};

// A job holding resources.
struct RunningJob {
  std::string id;
  std::string user;
  std::string queue = "default";
  int priority = 0;
  Resources total;
  int64_t started_ms = 0;
  int64_t estimate_ms = 0;  // 0: unknown, so it holds its resources for as long as anyone can tell
  bool preempting = false;  // already told to stop for another job: its resources are on their way back
  double attained_before = 0;  // service in its earlier attempts, size x ms
  bool aged = false;           // it had run before, and waited past max_wait_to_resume when it started
  bool checkpointed = false;   // Shoal keeps its checkpoints: preempting it loses little
};

// A job's size for attained service: its GPUs, or its CPUs when it has none.
double ServiceSize(const Resources& total);

struct ClusterState {
  Resources capacity;       // the whole cluster
  Resources free;           // what is not held by running jobs
  std::set<int> free_gpus;  // device indices
};

struct ScheduleInput {
  const SchedulingConfig* config = nullptr;
  ClusterState cluster;
  std::vector<PendingJob> pending;  // any order
  std::vector<RunningJob> running;
  int64_t now_ms = 0;
  bool explain = true;  // false: no reasons are written (a replay that only counts)
  // queue -> its credit, share x ms (scheduling/queue_credit.h); absent: none.
  std::map<std::string, double> queue_credit;
};

struct JobAdmission {
  std::string job_id;
  Resources total;                          // what the job takes
  std::vector<std::vector<int>> task_gpus;  // per task, the devices it gets
};

struct Preemption {
  std::string job_id;   // the running job to stop
  std::string for_job;  // the queued job that needs its resources
  // "job-7 of queue research, which is below its guarantee, needs its resources; ...", or
  // "for job-7 (priority 100) in queue research, which allows preempting lower priorities"
  std::string reason;
};

struct ScheduleDecision {
  std::vector<JobAdmission> admit;             // in the order they were chosen
  std::vector<Preemption> preempt;             // running jobs to stop now
  std::map<std::string, std::string> waiting;  // every pending job not admitted -> why
  // When each reserved job is expected to start (ms since the epoch; absent when never
  // with the estimates known).
  std::map<std::string, int64_t> reserved_start_ms;
};

ScheduleDecision Schedule(const ScheduleInput& input);

// Whether the job has waited past its starvation bound at `now_ms` (see the contract).
bool WaitedPastBound(const PendingJob& job, const SchedulingConfig& config, int64_t now_ms);

// A job's dominant share: its largest fraction of the capacity over CPUs, memory, GPUs.
double DominantShare(const Resources& used, const Resources& capacity);
// `share` (0..1) of each of the capacity's resources (GPUs rounded down).
Resources ShareOf(const Resources& capacity, double share);
// True when `limit` (a component of 0: no limit on it) holds `used` + `need`.
bool WithinLimit(const Resources& limit, const Resources& used, const Resources& need);

}  // namespace shoal
