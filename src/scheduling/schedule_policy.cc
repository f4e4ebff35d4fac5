#include "scheduling/schedule_policy.h"

#include <algorithm>
#include <deque>
#include <tuple>

#include "scheduling/resource_profile.h"
#include "scheduling/wait_reasons.h"

namespace shoal {

const QueueSpec* SchedulingConfig::FindQueue(const std::string& name) const {
  for (const QueueSpec& queue : queues) {
    if (queue.name == name) return &queue;
  }
  return nullptr;
}

double DominantShare(const Resources& used, const Resources& capacity) {
  double share = 0;
  if (capacity.cpus > 0) share = std::max(share, used.cpus / capacity.cpus);
  if (capacity.memory_bytes > 0) share = std::max(share, static_cast<double>(used.memory_bytes) / capacity.memory_bytes);
  if (capacity.gpus > 0) share = std::max(share, static_cast<double>(used.gpus) / capacity.gpus);
  return share;
}

Resources ShareOf(const Resources& capacity, double share) {
  return Resources{capacity.cpus * share, static_cast<int64_t>(static_cast<double>(capacity.memory_bytes) * share),
                   static_cast<int>(static_cast<double>(capacity.gpus) * share + 1e-9)};
}

bool WithinLimit(const Resources& limit, const Resources& used, const Resources& need) {
  return (limit.cpus <= 0 || used.cpus + need.cpus <= limit.cpus + 1e-9) &&
         (limit.memory_bytes <= 0 || used.memory_bytes + need.memory_bytes <= limit.memory_bytes) &&
         (limit.gpus <= 0 || used.gpus + need.gpus <= limit.gpus);
}

double ServiceSize(const Resources& total) { return total.gpus > 0 ? total.gpus : total.cpus; }

std::vector<double> DefaultServiceLevels() {
  std::vector<double> levels;
  for (double gpu_hours : {0.1, 0.5, 2.0, 8.0, 32.0}) levels.push_back(gpu_hours * 3600 * 1000);
  return levels;
}

bool WaitedPastBound(const PendingJob& job, const SchedulingConfig& config, int64_t now_ms) {
  if (job.has_run) return job.waited_since_first_run_ms >= config.max_wait_to_resume_ms;
  return now_ms - job.submitted_ms >= config.max_wait_ms;
}

namespace {

Resources TotalOf(const PendingJob& job) {
  Resources total;
  for (const Resources& task : job.tasks) total += task;
  return total;
}

bool SubmittedBefore(const PendingJob* a, const PendingJob* b) {
  return std::tie(a->submitted_ms, a->id) < std::tie(b->submitted_ms, b->id);
}

// One scheduling pass: considers the pending jobs one at a time in the policy's order.
class Pass {
  // A limit that holds a job back though room may be free: its queue's max, or its user's
  // limit in the queue.
  struct Limit {
    Resources cap;     // a component of 0: no limit on it
    std::string user;  // whose jobs count against it; empty: all of the queue's
  };

  // A queue's first job that lacks room (or that its queue's max or its user's limit holds
  // back, where the queue allows preempting lower priorities): the one that may preempt for it.
  struct Head {
    const PendingJob* job;
    const QueueSpec* queue;
    Resources need;
    bool within_guarantee;  // starting it keeps its queue within its guarantee
    bool one_job_owed;      // its queue runs nothing, and it is within the one-job allowance
    bool below_guarantee;   // its queue is below its guarantee (in dominant share) now
    double ratio_after;     // its queue's dominant share over its guarantee with it started
    std::optional<Limit> limit;  // set when a limit, not room, holds it back
  };

 public:
  explicit Pass(const ScheduleInput& input)
      : in_(input), config_(*input.config), free_(input.cluster.free), free_gpus_(input.cluster.free_gpus),
        profile_(input.now_ms, input.cluster.free, Releases(input)) {
    for (const RunningJob& job : input.running) {
      queue_used_[job.queue] += job.total;
      user_used_[{job.queue, job.user}] += job.total;
      if (!job.preempting) ++queue_jobs_[job.queue];
    }
  }

  ScheduleDecision Run() {
    std::vector<const PendingJob*> jobs;
    for (const PendingJob& job : in_.pending) jobs.push_back(&job);
    std::sort(jobs.begin(), jobs.end(), SubmittedBefore);
    if (config_.order == OrderPolicy::kFifo) {
      for (const PendingJob* job : jobs) Consider(*job);
      return std::move(decision_);
    }
    // Aged jobs first, oldest first; then the fair-share order.
    std::vector<const PendingJob*> fresh;
    for (const PendingJob* job : jobs) {
      if (WaitedPastBound(*job, config_, in_.now_ms) && Liftable(*job)) {
        if (in_.explain) aged_.insert(job->id);
        Consider(*job);
      } else {
        fresh.push_back(job);
      }
    }
    ConsiderFairShare(fresh);
    if (config_.preemption) {
      for (const Head& head : heads_) PreemptFor(head);
    }
    return std::move(decision_);
  }

 private:
  static std::vector<ResourceProfile::Release> Releases(const ScheduleInput& input) {
    std::vector<ResourceProfile::Release> releases;
    for (const RunningJob& job : input.running) {
      if (job.estimate_ms > 0) releases.push_back({job.started_ms + job.estimate_ms, job.total});
    }
    return releases;
  }

  // Whether its bound lifts the job: only when starting it keeps its queue within its
  // guarantee (with what the pass has started so far), or the queue is guaranteed the
  // whole cluster (it borrows from nobody). Lifting a borrower would start it ahead of the
  // queues it borrows from, only for preemption to take it back (measured on the trace
  // replay: thousands of preemptions, and longer waits for everyone).
  bool Liftable(const PendingJob& job) {
    const QueueSpec* queue = config_.FindQueue(job.queue);
    if (!queue) return false;
    return queue->guarantee >= 1 - 1e-9 || OneJobOwed(job, TotalOf(job)) ||
           WithinLimit(ShareOf(in_.cluster.capacity, queue->guarantee), queue_used_[job.queue], TotalOf(job));
  }

  // Queues take turns (the one furthest below its guarantee next); inside a queue, the
  // best of each user's first job by priority, then the user's share, then age.
  void ConsiderFairShare(const std::vector<const PendingJob*>& jobs) {
    // queue -> user -> that user's jobs, best first (priority, then age)
    std::map<std::string, std::map<std::string, std::deque<const PendingJob*>>> lines;
    for (const PendingJob* job : jobs) lines[job->queue][job->user].push_back(job);
    for (auto& [queue, users] : lines) {
      for (auto& [user, line] : users) {
        std::stable_sort(line.begin(), line.end(), [this](const PendingJob* a, const PendingJob* b) {
          return std::make_tuple(-a->priority, Level(a->attained)) < std::make_tuple(-b->priority, Level(b->attained));
        });
      }
    }
    const Resources& capacity = in_.cluster.capacity;
    while (!lines.empty()) {
      const PendingJob* next = nullptr;
      double next_queue_ratio = 0;
      for (auto& [queue, users] : lines) {
        const PendingJob* best = nullptr;
        double best_share = 0;
        for (auto& [user, line] : users) {
          const PendingJob* head = line.front();
          double share = DominantShare(user_used_[{queue, user}], capacity);
          if (!best || std::make_tuple(-head->priority, Level(head->attained), share, head->submitted_ms, head->id) <
                           std::make_tuple(-best->priority, Level(best->attained), best_share, best->submitted_ms, best->id)) {
            best = head, best_share = share;
          }
        }
        // A job owed as its queue's one job goes after every job within its queue's
        // guarantee (which could take it back) and before every other borrower. A job on
        // its queue's credit goes by how far below its guarantee its queue is now, as a
        // job within it would: nothing takes it back while the credit lasts, and the
        // room its credit took back is not taken first by the queues it was taken from.
        double ratio = QueueRatio(queue, TotalOf(*best));
        if (OnCredit(*best, TotalOf(*best))) {
          ratio = QueueRatio(queue, Resources{});
        } else if (OneJobOwed(*best, TotalOf(*best))) {
          ratio = std::min(ratio, 1 + 1e-6);
        }
        if (!next || std::make_tuple(ratio, -best->priority, Level(best->attained), best->submitted_ms, best->id) <
                         std::make_tuple(next_queue_ratio, -next->priority, Level(next->attained), next->submitted_ms, next->id)) {
          next = best, next_queue_ratio = ratio;
        }
      }
      auto& users = lines[next->queue];
      auto& line = users[next->user];
      line.pop_front();
      if (line.empty()) users.erase(next->user);
      std::string queue = next->queue;
      Consider(*next);
      if (users.empty()) lines.erase(queue);
    }
  }

  // A queue with a guarantee always may run one job, up to twice its guarantee rounded up
  // to a whole GPU (a whole CPU on a cluster without GPUs): its guarantee rounded up to its
  // jobs' size, so that a queue guaranteed less than one of its jobs is not left to what
  // others leave idle. The bound keeps a small queue from taking the cluster with one job.
  bool WithinOneJobAllowance(const QueueSpec& queue, const Resources& job) const {
    if (queue.guarantee <= 0) return false;
    const Resources& capacity = in_.cluster.capacity;
    const double unit = capacity.gpus > 0 ? 1.0 / capacity.gpus : capacity.cpus > 0 ? 1.0 / capacity.cpus : 0;
    return DominantShare(job, capacity) <= 2 * std::max(queue.guarantee, unit) + 1e-9;
  }

  // Whether `job`, needing `next`, is the one job its queue is owed: the queue runs
  // nothing now, or the job may start on its queue's credit.
  bool OneJobOwed(const PendingJob& job, const Resources& next) {
    const QueueSpec* queue = config_.FindQueue(job.queue);
    if (!queue) return false;
    return (queue_jobs_[job.queue] == 0 && WithinOneJobAllowance(*queue, next)) || OnCredit(job, next);
  }

  // `job` may start on its queue's credit: the credit covers it, and the job checkpoints.
  // Credit moves jobs in turns (it is taken back when the credit is spent, and again at
  // every turn), which a job that keeps no checkpoint would not survive: it would start
  // over each time and, longer than a turn, never end.
  bool OnCredit(const PendingJob& job, const Resources& next) const {
    return job.checkpointed && CreditCovers(job.queue, next);
  }

  // The queue is below its guarantee and has credit (scheduling/queue_credit.h) enough to
  // hold `next` beyond its guarantee for min_run_before_preemption: it was held below its
  // guarantee by the size of its jobs, long enough that the job it starts on credit is not
  // taken back at once.
  bool CreditCovers(const std::string& name, const Resources& next) const {
    const QueueSpec* queue = config_.FindQueue(name);
    auto credit = in_.queue_credit.find(name);
    if (!queue || queue->guarantee <= 0 || credit == in_.queue_credit.end() || credit->second <= 0) return false;
    if (QueueRatio(name, Resources{}) >= 1 - 1e-9) return false;
    const double beyond = std::max(0.0, (QueueRatio(name, next) - 1) * queue->guarantee);
    return credit->second >= beyond * static_cast<double>(std::max<int64_t>(1, config_.min_run_before_preemption_ms));
  }

  // What a borrowing job's wait reason says of its queue's credit, if it covers the job.
  std::string CreditNote(const PendingJob& job, const Resources& need) const {
    if (!CreditCovers(job.queue, need)) return "";
    if (job.checkpointed) {
      return "; its queue has credit (its jobs were too large for what it had left of its guarantee), so it goes "
             "before other borrowers and takes back from queues at their guarantees";
    }
    return "; its queue has credit, but this job keeps no checkpoint, so it does not start on credit (it would be "
           "taken back when the credit is spent, and start over): give it a `checkpoint:`";
  }

  bool HasCredit(const std::string& name) const {
    auto credit = in_.queue_credit.find(name);
    return credit != in_.queue_credit.end() && credit->second > 0;
  }

  // Whether the job would borrow: starting it would take its queue beyond its guarantee
  // (a queue guaranteed the whole cluster never borrows), and it is not the one job its
  // queue runs when it runs nothing.
  bool Borrows(const PendingJob& job, const QueueSpec& queue, const Resources& need) {
    if (queue.guarantee >= 1 - 1e-9) return false;
    if (queue_jobs_[job.queue] == 0 && WithinOneJobAllowance(queue, need)) return false;
    return QueueRatio(job.queue, Resources{}) >= 1 - 1e-9 ||
           !WithinLimit(ShareOf(in_.cluster.capacity, queue.guarantee), queue_used_[job.queue], need);
  }

  // How far the queue would be towards its guarantee with its next job started: its
  // dominant share over its guaranteed share. Counting the job keeps a queue whose job
  // would borrow from going before one whose job stays within its guarantee. Queues with
  // no guarantee come after every queue that has one.
  double QueueRatio(const std::string& name, const Resources& next) const {
    const QueueSpec* queue = config_.FindQueue(name);
    auto used = queue_used_.find(name);
    Resources with_next = next;
    if (used != queue_used_.end()) with_next += used->second;
    double share = DominantShare(with_next, in_.cluster.capacity);
    if (!queue || queue->guarantee <= 0) return 1e9 * (1 + share);
    return share / queue->guarantee;
  }

  void Consider(const PendingJob& job) {
    const Resources need = TotalOf(job);
    const QueueSpec* queue = config_.FindQueue(job.queue);
    if (!queue) {
      Wait(job, "queue " + job.queue + " is not configured on this server any more; kill the job and submit it to a "
                "configured queue (shoal queues lists them)");
      return;
    }
    if (!head_of_line_.empty()) {
      Wait(job, "behind " + head_of_line_ + " (jobs start in submission order)");
      return;
    }
    if (auto stopped = queue_stopped_.find(job.queue); stopped != queue_stopped_.end()) {
      Wait(job, "behind " + stopped->second + " in queue " + job.queue + ", which is at its max");
      return;
    }
    Resources& user_used = user_used_[{job.queue, job.user}];
    if (!WithinLimit(queue->user_limit, user_used, need)) {
      HeldBackByLimit(job, *queue, need, Limit{queue->user_limit, job.user});
      Wait(job, Explain([&] { return wait_reasons::OverUserLimit(job.user, *queue, user_used, need); }));
      return;
    }
    Resources& queue_used = queue_used_[job.queue];
    if (queue->max < 1 && !WithinLimit(ShareOf(in_.cluster.capacity, queue->max), queue_used, need)) {
      queue_stopped_[job.queue] = job.id;
      HeldBackByLimit(job, *queue, need, Limit{ShareOf(in_.cluster.capacity, queue->max), ""});
      Wait(job, Explain([&] { return wait_reasons::OverQueueMax(*queue, queue_used, in_.cluster.capacity, need); }));
      return;
    }
    const bool fits_now = free_.Fits(need) && static_cast<int>(free_gpus_.size()) >= need.gpus;
    if (fits_now && (!config_.backfill || profile_.FitsFrom(in_.now_ms, need, job.estimate_ms))) {
      Admit(job, need);
      return;
    }
    if (config_.order == OrderPolicy::kFairShare && !starved_queues_.count(job.queue)) {
      starved_queues_.insert(job.queue);  // only a queue's first job that lacks room may preempt
      heads_.push_back(Head{&job, queue, need, WithinLimit(ShareOf(in_.cluster.capacity, queue->guarantee), queue_used, need),
                            OneJobOwed(job, need),
                            queue->guarantee > 0 && QueueRatio(job.queue, Resources{}) < 1 - 1e-9,
                            QueueRatio(job.queue, need)});
    }
    if (!config_.backfill) {
      head_of_line_ = job.id;
      Wait(job, Explain([&] { return Queued(job, *queue, need, wait_reasons::Short(need, free_)); }));
      return;
    }
    if (config_.order == OrderPolicy::kFairShare && Borrows(job, *queue, need)) {
      // It would take its queue beyond its guarantee: it runs on what is free at its turn
      // (or what it takes back on its queue's credit) and holds nothing for itself
      // meanwhile, so that it holds back no job behind it (borrowing never blocks).
      Wait(job, Explain([&] {
        return Queued(job, *queue, need,
                      (fits_now ? wait_reasons::WouldDelay(first_reserved_, job.estimate_ms > 0)
                                : wait_reasons::Short(need, free_)) +
                          "; it would take its queue beyond its guarantee, so it reserves nothing and jobs behind it "
                          "may start first" + CreditNote(job, need));
      }));
      return;
    }
    if (reservations_ >= config_.max_reservations) {
      Wait(job, Explain([&] {
        return Queued(job, *queue, need, fits_now ? "behind " + std::to_string(reservations_) + " reserved jobs"
                                                  : wait_reasons::Short(need, free_));
      }));
      return;
    }
    Reserve(job, need, fits_now, *queue);
  }

  // Where its queue allows preempting lower priorities, a job held back by its queue's max or
  // its user's limit may preempt the lower-priority jobs that count against that limit: the
  // first such job of each limit in the pass.
  void HeldBackByLimit(const PendingJob& job, const QueueSpec& queue, const Resources& need, Limit limit) {
    if (config_.order != OrderPolicy::kFairShare || !config_.preemption || !queue.preempt_lower_priority) return;
    if (!limited_.insert({job.queue, limit.user}).second) return;
    heads_.push_back(Head{&job, &queue, need, false, false, false, 0, std::move(limit)});
  }

  // Gives the job the earliest start that delays no earlier reservation. When no start
  // is known (what it needs is held by jobs with no estimate), it holds what will be
  // free once every estimated job has ended, so that nothing that starts later can take it.
  void Reserve(const PendingJob& job, const Resources& need, bool fits_now, const QueueSpec& queue) {
    ++reservations_;
    std::optional<int64_t> start = profile_.EarliestStart(need, job.estimate_ms);
    if (start) {
      profile_.Reserve(*start, need, job.estimate_ms);
      decision_.reserved_start_ms[job.id] = *start;
    } else {
      profile_.ReserveWhatIsLeftAtTheEnd(need);
    }
    Wait(job, Explain([&] {
      std::string why = fits_now ? wait_reasons::WouldDelay(first_reserved_, job.estimate_ms > 0)
                                 : wait_reasons::Short(need, free_);
      return Queued(job, queue, need, why + "; " + wait_reasons::ExpectedStart(start, in_.now_ms));
    }));
    if (first_reserved_.empty()) first_reserved_ = job.id;
  }

  // Makes room for a queue's first job that lacks it: first by taking back what other
  // queues borrowed (when its queue is below its guarantee: freely when the job keeps it
  // within, else only from queues that stay at least as far above their guarantees as the
  // job takes its own), else, where its queue allows it, from its queue's jobs of lower
  // priority.
  void PreemptFor(const Head& head) {
    if (head.limit) {  // only its queue's lower priorities under that limit can help
      PreemptLowerPriorities(*head.job, head.need, &*head.limit);
      return;
    }
    if (RoomOnItsWay().Fits(head.need)) return;  // what is already on its way back is enough
    if (head.within_guarantee && TakeBackFromBorrowers(*head.job, head.need, 0, /*spare_one_job=*/false)) return;
    if (head.within_guarantee) ExplainQueuesOnCredit(*head.job);
    if (head.one_job_owed && TakeBackFromBorrowers(*head.job, head.need, 0)) return;
    if (OnCredit(*head.job, head.need) && TakeBackOnCredit(*head.job, head.need)) return;
    if (!head.within_guarantee && head.below_guarantee && TakeBackFromBorrowers(*head.job, head.need, head.ratio_after)) {
      return;
    }
    if (head.queue->preempt_lower_priority && PreemptLowerPriorities(*head.job, head.need)) return;
    if (!config_.service_levels.empty()) PreemptMoreAttained(*head.job, head.need);
  }

  // Tells a job within its queue's guarantee that waits which queues keep their jobs
  // beyond their guarantees on credit (TakeBackFromBorrowers spares them).
  void ExplainQueuesOnCredit(const PendingJob& job) {
    if (!in_.explain) return;
    std::set<std::string> on_credit;
    for (const RunningJob& running : in_.running) {
      if (running.queue != job.queue && HasCredit(running.queue) && QueueRatio(running.queue, Resources{}) > 1 + 1e-9) {
        on_credit.insert(running.queue);
      }
    }
    for (const std::string& queue : on_credit) {
      decision_.waiting[job.id] += "; queue " + queue + " runs beyond its guarantee on the credit it is owed (its jobs "
                                   "were too large for its guarantee) and keeps its jobs until it has spent it";
    }
  }

  // The level of a service: how many thresholds it has reached.
  int Level(double attained) const {
    const auto& levels = config_.service_levels;
    return static_cast<int>(std::upper_bound(levels.begin(), levels.end(), attained) - levels.begin());
  }

  double Attained(const RunningJob& job) const {
    return job.attained_before + ServiceSize(job.total) * static_cast<double>(std::max<int64_t>(0, in_.now_ms - job.started_ms));
  }

  // Running jobs of the job's queue and priority at a higher attained-service level that
  // checkpoint, have run long enough in their attempt and were not resumed for having
  // waited past max_wait_to_resume.
  void PreemptMoreAttained(const PendingJob& job, const Resources& need) {
    const int level = Level(job.attained);
    auto more_attained = [&](const RunningJob& running) {
      return running.queue == job.queue && running.priority == job.priority && running.checkpointed && !running.aged &&
             Level(Attained(running)) > level &&
             in_.now_ms - running.started_ms >= config_.min_run_before_preemption_ms;
    };
    std::vector<const RunningJob*> victims = VictimsToMakeRoom(need, more_attained, [&](const RunningJob& running) {
      return -Attained(running);
    });
    auto reason = [&](const RunningJob& victim) {
      return "for " + job.id + " in queue " + job.queue + ", which has had less service (level " +
             std::to_string(level) + " against " + std::to_string(Level(Attained(victim))) + ")";
    };
    Choose(job, victims, reason, "more service attained in queue " + job.queue);
  }

  // What is free plus what jobs already being preempted will give back.
  Resources RoomOnItsWay() const {
    Resources room = free_;
    for (const RunningJob& running : in_.running) {
      if (running.preempting) room += running.total;
    }
    return room;
  }

  // Running jobs of queues above their guarantees; a queue gives up jobs only while it
  // is above its guarantee, and while its dominant share over its guarantee stays at
  // least `floor` without them (a queue with no guarantee: always). The floor is what a
  // job that takes its own queue beyond its guarantee brings that queue to: the queues it
  // takes from end no nearer their guarantees than it, so they cannot take back in turn.
  // Never a job of a queue with credit (it is running on what it is owed); with
  // `spare_one_job` (for a job beyond its own queue's guarantee), not a queue's only job
  // within its one-job allowance either. True when they make room for `job`.
  bool TakeBackFromBorrowers(const PendingJob& job, const Resources& need, double floor, bool spare_one_job = true) {
    std::map<std::string, Resources> used = queue_used_;
    std::map<std::string, int> jobs = queue_jobs_;
    auto take_if_borrowing = [&](const RunningJob& running) {
      if (running.queue == job.queue) return false;
      const QueueSpec* queue = config_.FindQueue(running.queue);
      double guarantee = queue ? queue->guarantee : 0;
      if (DominantShare(used[running.queue], in_.cluster.capacity) <= guarantee + 1e-9) return false;  // not borrowing
      if (HasCredit(running.queue)) return false;  // its queue runs on the credit it is owed
      if (spare_one_job && queue && jobs[running.queue] == 1 && WithinOneJobAllowance(*queue, running.total)) {
        return false;  // its queue's one job
      }
      Resources without = used[running.queue];
      without -= running.total;
      if (guarantee > 0 && DominantShare(without, in_.cluster.capacity) / guarantee < floor - 1e-9) return false;
      used[running.queue] = without;
      --jobs[running.queue];
      return true;
    };
    std::vector<const RunningJob*> victims = VictimsToMakeRoom(need, take_if_borrowing);
    auto reason = [&](const RunningJob& victim) {
      return job.id + " of queue " + job.queue + ", which is below its guarantee, needs its resources; queue " +
             victim.queue + " was using more than its guarantee";
    };
    Choose(job, victims, reason, "borrowed from queues above their guarantees");
    return !victims.empty();
  }

  // For a job its queue's credit is owed when borrowers alone cannot make room: running
  // jobs of other queues at or above their guarantees, without credit, that checkpoint and
  // have run `min_run_before_preemption_ms` in their attempt, the most served first; never
  // a queue's only job within its one-job allowance (taken at every turn, a job that keeps
  // no checkpoint would start over each time). Those queues fall below their
  // guarantees while the credit lasts: the guarantee of the queue on credit holds over
  // time, not at every moment, as jobs too large for it can only be given it so.
  bool TakeBackOnCredit(const PendingJob& job, const Resources& need) {
    std::map<std::string, int> jobs = queue_jobs_;
    auto take = [&](const RunningJob& running) {
      if (running.queue == job.queue || HasCredit(running.queue)) return false;
      if (QueueRatio(running.queue, Resources{}) < 1 - 1e-9) return false;  // below its guarantee
      if (!running.checkpointed || in_.now_ms - running.started_ms < config_.min_run_before_preemption_ms) return false;
      const QueueSpec* queue = config_.FindQueue(running.queue);
      if (queue && jobs[running.queue] == 1 && WithinOneJobAllowance(*queue, running.total)) return false;
      --jobs[running.queue];
      return true;
    };
    std::vector<const RunningJob*> victims =
        VictimsToMakeRoom(need, take, [&](const RunningJob& running) { return -Attained(running); });
    auto reason = [&](const RunningJob& victim) {
      return job.id + " of queue " + job.queue + " runs on the credit its queue is owed for time spent below its "
             "guarantee; queue " + victim.queue + " was at its guarantee or beyond";
    };
    Choose(job, victims, reason, "queues at their guarantees, for " + job.queue + "'s credit");
    return !victims.empty();
  }

  // Running jobs of the job's own queue with a strictly lower priority than it. With a
  // `limit` that holds the job back, only jobs counted against it (its user's, for a user
  // limit), and as many as bring the job within the limit as well as make room.
  bool PreemptLowerPriorities(const PendingJob& job, const Resources& need, const Limit* limit = nullptr) {
    auto lower_in_same_queue = [&](const RunningJob& running) {
      return running.queue == job.queue && running.priority < job.priority &&
             (!limit || limit->user.empty() || running.user == limit->user);
    };
    std::vector<const RunningJob*> victims =
        VictimsToMakeRoom(need, lower_in_same_queue, NoOrder, limit ? OverLimit(job, need, *limit) : Resources{});
    auto reason = [&](const RunningJob&) {
      return "for " + job.id + " (priority " + std::to_string(job.priority) + ") in queue " + job.queue +
             ", which allows preempting lower priorities";
    };
    Choose(job, victims, reason, "lower priorities in queue " + job.queue);
    return !victims.empty();
  }

  // How far `job`, needing `need`, would take the use counted against `limit` beyond it,
  // not counting the jobs already on their way out: what preempted jobs must release.
  Resources OverLimit(const PendingJob& job, const Resources& need, const Limit& limit) const {
    Resources used = need;
    for (const RunningJob& running : in_.running) {
      if (running.queue == job.queue && (limit.user.empty() || running.user == limit.user) && !running.preempting &&
          !chosen_.count(running.id)) {
        used += running.total;
      }
    }
    auto beyond = [](auto used, auto cap) { return cap > 0 && used > cap ? used - cap : decltype(used){0}; };
    return Resources{beyond(used.cpus, limit.cap.cpus), beyond(used.memory_bytes, limit.cap.memory_bytes),
                     beyond(used.gpus, limit.cap.gpus)};
  }

  static int NoOrder(const RunningJob&) { return 0; }

  // Running jobs that `take` accepts, asked in the order they would be stopped (lowest
  // priority first, then the youngest), until they and the room on its way fit `need` and
  // they release at least `release` between them; none when all of them would not. Jobs
  // being preempted or already chosen are not asked. `first` (a number, lowest asked
  // first) comes before that order when given.
  template <typename Take, typename First = int (*)(const RunningJob&)>
  std::vector<const RunningJob*> VictimsToMakeRoom(const Resources& need, Take take, First first = NoOrder,
                                                   const Resources& release = {}) const {
    std::vector<const RunningJob*> candidates;
    for (const RunningJob& running : in_.running) {
      if (!running.preempting && !chosen_.count(running.id)) candidates.push_back(&running);
    }
    std::sort(candidates.begin(), candidates.end(), [&](const RunningJob* a, const RunningJob* b) {
      return std::make_tuple(first(*a), a->priority, -a->started_ms, a->id) <
             std::make_tuple(first(*b), b->priority, -b->started_ms, b->id);
    });
    Resources room = RoomOnItsWay(), released;
    auto enough = [&] { return room.Fits(need) && released.Fits(release); };
    std::vector<const RunningJob*> victims;
    for (const RunningJob* candidate : candidates) {
      if (enough()) break;
      if (!take(*candidate)) continue;
      room += candidate->total;
      released += candidate->total;
      victims.push_back(candidate);
    }
    if (!enough()) victims.clear();
    return victims;
  }

  // Records the preemptions, each with `reason(victim)`, and tells the job's waiting
  // reason which jobs make room for it and why they may (`whose`).
  template <typename Reason>
  void Choose(const PendingJob& job, const std::vector<const RunningJob*>& victims, Reason reason,
              const std::string& whose) {
    if (victims.empty()) return;
    std::string victims_text;
    for (const RunningJob* victim : victims) {
      chosen_.insert(victim->id);
      --queue_jobs_[victim->queue];
      queue_used_[victim->queue] -= victim->total;
      decision_.preempt.push_back(Preemption{victim->id, job.id, reason(*victim)});
      victims_text += (victims_text.empty() ? "" : ", ") + victim->id;
    }
    if (in_.explain) {
      decision_.waiting[job.id] = "preempting " + victims_text + " (" + whose + ") to make room; " + decision_.waiting[job.id];
    }
  }

  // The reason of a job that waits for resources: what is short, its place in its
  // queue, and the queue's use of its guarantee.
  std::string Queued(const PendingJob& job, const QueueSpec& queue, const Resources& need, const std::string& why) {
    const auto& [ahead, first_ahead] = waiting_in_queue_[job.queue];
    std::string text = why + "; " + wait_reasons::Position(job.queue, ahead + 1, first_ahead);
    if (config_.order == OrderPolicy::kFairShare) {
      text += "; " + wait_reasons::QueueUse(queue, queue_used_[job.queue], in_.cluster.capacity, need);
    }
    if (aged_.count(job.id)) {
      text += job.has_run ? "; it has waited longer in all than the server's max_wait_to_resume, so it goes first"
                          : "; it has waited longer than the server's max_wait, so it goes first";
    }
    return text;
  }

  template <typename Words>
  std::string Explain(Words words) {
    return in_.explain ? words() : std::string();
  }

  void Wait(const PendingJob& job, std::string reason) {
    if (in_.explain) {
      auto& [ahead, first_ahead] = waiting_in_queue_[job.queue];
      if (ahead++ == 0) first_ahead = job.id;
    }
    decision_.waiting[job.id] = std::move(reason);
  }

  void Admit(const PendingJob& job, const Resources& need) {
    JobAdmission admission{job.id, need, {}};
    for (const Resources& task : job.tasks) {
      std::vector<int> gpus;
      for (int i = 0; i < task.gpus; ++i) {
        gpus.push_back(*free_gpus_.begin());
        free_gpus_.erase(free_gpus_.begin());
      }
      admission.task_gpus.push_back(std::move(gpus));
    }
    free_ -= need;
    ++queue_jobs_[job.queue];
    queue_used_[job.queue] += need;
    user_used_[{job.queue, job.user}] += need;
    if (config_.backfill) profile_.Reserve(in_.now_ms, need, job.estimate_ms);
    decision_.admit.push_back(std::move(admission));
  }

  const ScheduleInput& in_;
  const SchedulingConfig& config_;
  Resources free_;
  std::set<int> free_gpus_;
  ResourceProfile profile_;
  std::map<std::string, Resources> queue_used_;
  std::map<std::string, int> queue_jobs_;  // running jobs per queue, not counting those being preempted
  std::map<std::pair<std::string, std::string>, Resources> user_used_;  // (queue, user)
  std::map<std::string, std::string> queue_stopped_;                    // queue -> the job over its max
  std::map<std::string, std::pair<int, std::string>> waiting_in_queue_;  // how many wait, the first
  std::set<std::string> aged_;
  std::set<std::string> starved_queues_;                                // queues whose first job lacks room
  std::set<std::pair<std::string, std::string>> limited_;  // (queue, user or "") whose limit held back a head
  std::vector<Head> heads_;                                             // those jobs, in the order considered
  std::set<std::string> chosen_;                                        // running jobs chosen for preemption
  std::string head_of_line_;    // strict FIFO: the job that stopped the pass
  std::string first_reserved_;  // backfill: the first job given a reservation
  int reservations_ = 0;
  ScheduleDecision decision_;
};

}  // namespace

ScheduleDecision Schedule(const ScheduleInput& input) { return Pass(input).Run(); }

}  // namespace shoal
