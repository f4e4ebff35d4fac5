// bench/schedule: replays a week of the Philly trace through the real scheduling policy
// (shoal::Schedule) and compares it with strict FIFO, FIFO with backfill and two
// clairvoyant references (SJF, SRTF), in one run. See docs/benchmarks.md.
//
//   build/bench/schedule/bench_schedule --trace philly.csv [--vc 6c71a0] [--week-start 2017-10-23] [--gpus 64,96]
//
// For each cluster size, a table of job completion times, queueing, makespan, utilization,
// preemptions and the longest a job was passed over, with the mean JCT as a ratio to
// SRTF's; then all VCs of the week as queues under the default policy on the largest size,
// and whether each queue got its guarantee while it had work waiting. Exits 0; 2 for a bad
// flag or trace; 1 when a policy broke its contract during a replay.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench/schedule/metrics.h"
#include "bench/schedule/philly_trace.h"
#include "bench/schedule/reference_schedules.h"
#include "bench/schedule/replay.h"
#include "bench/schedule/shoal_policy.h"

namespace shoal::bench {
namespace {

constexpr int kWeekDays = 7;
constexpr char kUsage[] =
    "usage: bench_schedule --trace FILE [--vc ID] [--week-start YYYY-MM-DD] [--gpus N,N...]\n"
    "\n"
    "Replays the jobs one VC of the Philly trace submitted in one week through Shoal's scheduling\n"
    "policy (shoal::Schedule) and clairvoyant references, on clusters of each size; then every\n"
    "VC of that week as a queue with a guarantee under the default policy.\n"
    "\n"
    "  --trace FILE             the per-job philly.csv (where to get it: docs/benchmarks.md, bench/schedule)\n"
    "  --vc ID                  the virtual cluster to replay (default 6c71a0)\n"
    "  --week-start YYYY-MM-DD  the first day of the week, naive local time (default 2017-10-23)\n"
    "  --gpus N,N...            cluster sizes in GPUs, multiples of 8 (default 64,96)\n"
    "  --help                   print this and exit\n";

struct Flags {
  std::string trace;
  std::string vc = "6c71a0";
  std::string week_start = "2017-10-23";
  std::vector<int> gpus = {64, 96};
};

Result<std::vector<int>> ParseSizes(const std::string& text) {
  std::vector<int> sizes;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t comma = text.find(',', begin);
    std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    char* end = nullptr;
    long gpus = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || gpus <= 0 || gpus % ClusterModel::kGpusPerNode != 0 || gpus > 100000) {
      return InvalidArgument("--gpus " + text + ": give cluster sizes as multiples of 8 GPUs, e.g. --gpus 64,96");
    }
    sizes.push_back(static_cast<int>(gpus));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return sizes;
}

// Returns the flags, or an error; `help` is set when --help was given.
Result<Flags> ParseFlags(int argc, char** argv, bool& help) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i], value;
    if (flag == "--help" || flag == "-h") {
      help = true;
      return flags;
    }
    if (size_t equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else if (flag == "--trace" || flag == "--vc" || flag == "--week-start" || flag == "--gpus") {
      return InvalidArgument(flag + " needs a value: see --help");
    }
    if (flag == "--trace") {
      flags.trace = value;
    } else if (flag == "--vc") {
      flags.vc = value;
    } else if (flag == "--week-start") {
      flags.week_start = value;
    } else if (flag == "--gpus") {
      ASSIGN_OR_RETURN(flags.gpus, ParseSizes(value));
    } else {
      return InvalidArgument("unknown flag " + flag + ": see --help");
    }
  }
  if (flags.trace.empty()) {
    return InvalidArgument(
        "--trace FILE is required: the path of philly.csv (docs/benchmarks.md says where to get it)");
  }
  return flags;
}

// A VC missing from `queue_of_vc` goes to queue 0.
std::vector<ReplayJob> ToReplayJobs(const std::vector<TraceRow>& slice, const std::map<std::string, int>& queue_of_vc) {
  std::vector<ReplayJob> jobs;
  for (const TraceRow& row : slice) {
    ReplayJob job{.submit_s = row.submit_s, .duration_s = row.duration_s, .task_gpus = TaskGpus(row.num_gpus)};
    for (int gpus : job.task_gpus) job.gpus += gpus;
    auto queue = queue_of_vc.find(row.vc);
    job.queue = queue == queue_of_vc.end() ? 0 : queue->second;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

double GpuHours(const std::vector<TraceRow>& rows) {
  double seconds = 0;
  for (const TraceRow& row : rows) seconds += static_cast<double>(row.duration_s) * row.num_gpus;
  return seconds / 3600;
}

SchedulingConfig Config(OrderPolicy order, bool backfill, std::vector<QueueSpec> queues) {
  SchedulingConfig config;
  config.order = order;
  config.backfill = backfill;
  config.queues = std::move(queues);
  if (order == OrderPolicy::kFifo) config.service_levels.clear();  // FIFO has no levels (it would ignore them)
  return config;
}

// One policy's replay, with what the table and the footnotes need.
struct PolicyRun {
  std::string name;
  ReplayResult result;
  PolicyMetrics metrics;
  const ShoalPolicy* shoal = nullptr;  // set for the policies under test
};

Result<PolicyRun> RunPolicy(const std::vector<ReplayJob>& jobs, int num_queues, const ClusterModel& model,
                            ReplayPolicy& policy) {
  ASSIGN_OR_RETURN(ReplayResult result, Replay(jobs, num_queues, model, policy));
  PolicyMetrics metrics = ComputeMetrics(jobs, result, model.gpus);
  return PolicyRun{policy.Name(), std::move(result), metrics, dynamic_cast<const ShoalPolicy*>(&policy)};
}

void PrintScheduleCost(const std::vector<PolicyRun>& runs) {
  for (const PolicyRun& run : runs) {
    if (!run.shoal) continue;
    const int64_t calls = run.shoal->schedule_calls();
    std::printf("  %s: %lld Schedule calls, %.2f s in them (%.3f ms each, at most %zu jobs pending), replay %.2f s\n",
                run.name.c_str(), static_cast<long long>(calls), run.shoal->schedule_seconds(),
                calls ? 1000 * run.shoal->schedule_seconds() / calls : 0.0, run.result.most_waiting,
                run.result.wall_seconds);
  }
}

void PrintPolicyTable(int gpus, const std::vector<PolicyRun>& runs, double srtf_mean_jct_s) {
  std::printf("\n### %d GPUs (%d nodes)\n\n", gpus, gpus / ClusterModel::kGpusPerNode);
  std::printf(
      "| policy | mean JCT h | p99 JCT h | mean queueing h | makespan d | GPU util | GPU util while jobs wait | "
      "preemptions | longest passed over h | longest wait h | x SRTF |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const PolicyRun& run : runs) {
    const PolicyMetrics& m = run.metrics;
    std::printf("| %s | %.1f | %.1f | %.1f | %.2f | %.1f%% | %.1f%% | %lld | %.1f | %.1f | %.2f |\n", run.name.c_str(),
                m.mean_jct_s / 3600, m.p99_jct_s / 3600, m.mean_queueing_s / 3600, m.makespan_s / 86400,
                100 * m.gpu_utilization, 100 * m.gpu_utilization_while_waiting, static_cast<long long>(m.preemptions),
                m.longest_passed_over_s / 3600,
                m.longest_wait_s / 3600, m.mean_jct_s / srtf_mean_jct_s);
  }
  std::printf("\n");
  PrintScheduleCost(runs);
}

constexpr char kDefaultPolicy[] = "default (attained service, fair share, backfill)";
constexpr char kWithoutLevelsPolicy[] = "default without service levels (service_levels: [])";

// Per size, a policy's mean JCT over SRTF's.
struct OverSrtf {
  std::vector<double> default_policy;
  std::vector<double> without_levels;
};

// The VC's slice at each size, under the policies and the two references. Returns the
// default policy's mean JCT over SRTF's per size, with and without service levels.
Result<OverSrtf> CompareOnOneVc(const std::vector<TraceRow>& slice, const std::vector<int>& sizes) {
  const std::vector<ReplayJob> jobs = ToReplayJobs(slice, {});
  const std::vector<QueueSpec> one_queue = {{.name = "default", .guarantee = 1, .max = 1}};
  const SchedulingConfig fifo = Config(OrderPolicy::kFifo, false, one_queue);
  const SchedulingConfig fifo_backfill = Config(OrderPolicy::kFifo, true, one_queue);
  const SchedulingConfig fair_share = Config(OrderPolicy::kFairShare, true, one_queue);
  // The default as it was before attained service: queues.yaml's service_levels: [].
  SchedulingConfig without_levels = fair_share;
  without_levels.service_levels.clear();
  OverSrtf over_srtf;
  for (int gpus : sizes) {
    const ClusterModel model{.gpus = gpus};
    ShoalPolicy strict_fifo("FIFO", fifo, {"default"}, model);
    ShoalPolicy fifo_with_backfill("FIFO + backfill", fifo_backfill, {"default"}, model);
    ShoalPolicy default_policy(kDefaultPolicy, fair_share, {"default"}, model);
    ShoalPolicy with_estimates("default, exact estimates declared", fair_share, {"default"}, model, true);
    ShoalPolicy without_levels_policy(kWithoutLevelsPolicy, without_levels, {"default"}, model);
    ShortestJobFirst sjf;
    ShortestRemainingGpuTimeFirst srtf;
    std::vector<PolicyRun> runs;
    double default_mean_jct_s = 0, without_levels_mean_jct_s = 0, srtf_mean_jct_s = 0;
    for (ReplayPolicy* policy : std::vector<ReplayPolicy*>{&strict_fifo, &fifo_with_backfill, &default_policy,
                                                           &with_estimates, &without_levels_policy, &sjf, &srtf}) {
      ASSIGN_OR_RETURN(PolicyRun run, RunPolicy(jobs, 1, model, *policy));
      if (policy == &default_policy) default_mean_jct_s = run.metrics.mean_jct_s;
      if (policy == &without_levels_policy) without_levels_mean_jct_s = run.metrics.mean_jct_s;
      if (policy == &srtf) srtf_mean_jct_s = run.metrics.mean_jct_s;
      runs.push_back(std::move(run));
    }
    PrintPolicyTable(gpus, runs, srtf_mean_jct_s);
    over_srtf.default_policy.push_back(default_mean_jct_s / srtf_mean_jct_s);
    over_srtf.without_levels.push_back(without_levels_mean_jct_s / srtf_mean_jct_s);
  }
  return over_srtf;
}

// Every VC of the week as a queue, guaranteed its share of the week's GPU-hours, on a
// cluster of `gpus` (one size: a replay of this overloaded case takes about 25 s).
Status CompareTenants(const std::vector<TraceRow>& week, int gpus) {
  std::map<std::string, std::vector<TraceRow>> rows_of_vc;
  for (const TraceRow& row : week) rows_of_vc[row.vc].push_back(row);
  const double total_gpu_hours = GpuHours(week);
  std::vector<QueueSpec> queues;
  std::vector<std::string> names;
  std::map<std::string, int> queue_of_vc;
  for (const auto& [vc, rows] : rows_of_vc) {
    queue_of_vc[vc] = static_cast<int>(names.size());
    names.push_back(vc);
    queues.push_back({.name = vc, .guarantee = GpuHours(rows) / total_gpu_hours, .max = 1});
  }
  queues.push_back({.name = "default", .guarantee = 0, .max = 1});  // the server always has it; no job uses it here
  const SchedulingConfig config = Config(OrderPolicy::kFairShare, true, queues);
  const std::vector<ReplayJob> jobs = ToReplayJobs(week, queue_of_vc);

  std::printf("\n## Every VC of the week as a queue: %zu queues, %zu jobs, %.0f GPU-hours, default policy, %d GPUs\n",
              names.size(), jobs.size(), total_gpu_hours, gpus);
  std::printf(
      "Guarantee = the VC's share of the week's GPU-hours (duration x GPUs of the jobs submitted in it), max 1,\n"
      "one user per queue. 'of its guarantee' = its mean use while it had a waiting job over its guarantee;\n"
      "'near guarantee' = the fraction of that time during which it held at least 90%% of its guarantee.\n"
      "Only the largest --gpus size is replayed (the case is overloaded at any of them: the week's GPU-hours\n"
      "would keep %d GPUs busy for %.0f days).\n",
      gpus, total_gpu_hours / gpus / 24);
  const ClusterModel model{.gpus = gpus};
  ShoalPolicy policy(kDefaultPolicy, config, names, model);
  ASSIGN_OR_RETURN(PolicyRun run, RunPolicy(jobs, static_cast<int>(names.size()), model, policy));
  const PolicyMetrics& m = run.metrics;
  std::printf(
      "\nAll queues: mean JCT %.1f h, p99 %.1f h, makespan %.1f d, GPU util %.1f%% (%.1f%% while jobs wait), "
      "longest passed over %.1f h, %lld preemptions\n\n",
      m.mean_jct_s / 3600, m.p99_jct_s / 3600, m.makespan_s / 86400, 100 * m.gpu_utilization,
      100 * m.gpu_utilization_while_waiting, m.longest_passed_over_s / 3600, static_cast<long long>(m.preemptions));
  std::printf(
      "| queue | jobs | GPU-hours | guarantee | = GPUs | hours with waiting work | mean use while waiting | "
      "of its guarantee | near guarantee |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int within_10_percent = 0;
  for (size_t queue = 0; queue < names.size(); ++queue) {
    const double guarantee = queues[queue].guarantee;
    QueueFairness fairness = ComputeQueueFairness(run.result, static_cast<int>(queue), guarantee, gpus);
    const double of_guarantee = fairness.mean_share_waiting / guarantee;
    within_10_percent += of_guarantee >= 0.9;
    std::printf("| %s | %zu | %.0f | %.1f%% | %.1f | %.1f | %.1f%% | %.0f%% | %.0f%% |\n", names[queue].c_str(),
                rows_of_vc[names[queue]].size(), GpuHours(rows_of_vc[names[queue]]), 100 * guarantee, guarantee * gpus,
                fairness.waiting_s / 3600, 100 * fairness.mean_share_waiting, 100 * of_guarantee,
                100 * fairness.fraction_near_guarantee);
  }
  std::printf("\n%d of %zu queues used at least 90%% of their guarantee, on average, while they had waiting work\n\n",
              within_10_percent, names.size());
  PrintScheduleCost({run});
  return Status::Ok();
}

// Every job of `slice` must fit a cluster of `gpus` once rounded to whole 8-GPU tasks;
// `fix` tells the user which --gpus size to raise.
Status CheckFits(const std::vector<TraceRow>& slice, const std::string& what, int gpus, const std::string& fix) {
  int largest = 0;
  for (const TraceRow& row : slice) {
    std::vector<int> tasks = TaskGpus(row.num_gpus);
    largest = std::max(largest, static_cast<int>(tasks.size()) * tasks.front());
  }
  if (largest <= gpus) return Status::Ok();
  return InvalidArgument("the largest job of " + what + " that week takes " + std::to_string(largest) +
                         " GPUs, more than a cluster of " + std::to_string(gpus) + ": " + fix + " at least " +
                         std::to_string(largest));
}

int ExitWith(const Status& status) {
  std::fprintf(stderr, "bench_schedule: %s\n", status.message().c_str());
  return status.code() == StatusCode::kInternal ? 1 : 2;
}

int Main(int argc, char** argv) {
  bool help = false;
  Result<Flags> flags = ParseFlags(argc, argv, help);
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!flags.ok()) return ExitWith(flags.status());
  Result<int64_t> week_start = ParseNaiveTime(flags->week_start);
  if (!week_start.ok()) return ExitWith(week_start.status().WithContext("--week-start"));
  Result<std::vector<TraceRow>> trace = ReadPhillyTrace(flags->trace);
  if (!trace.ok()) return ExitWith(trace.status());

  const std::vector<TraceRow> vc_week = SliceWeek(*trace, flags->vc, *week_start, kWeekDays);
  const std::vector<TraceRow> week = SliceWeek(*trace, "", *week_start, kWeekDays);
  if (vc_week.empty()) {
    return ExitWith(NotFound("no job of VC " + flags->vc + " was submitted in the week from " + flags->week_start +
                             " in " + flags->trace + ": check --vc and --week-start"));
  }
  int largest_job = 0, over_a_week = 0;
  for (const TraceRow& row : vc_week) {
    largest_job = std::max(largest_job, row.num_gpus);
    over_a_week += row.duration_s > kWeekDays * 86400;
  }
  const int smallest_size = *std::min_element(flags->gpus.begin(), flags->gpus.end());
  const int largest_size = *std::max_element(flags->gpus.begin(), flags->gpus.end());
  Status fits = CheckFits(vc_week, "VC " + flags->vc, smallest_size, "give --gpus sizes of");
  if (fits.ok()) fits = CheckFits(week, "all VCs", largest_size, "the largest --gpus size replays every VC: make it");
  if (!fits.ok()) return ExitWith(fits);
  const ClusterModel model;
  std::printf(
      "Model: clusters of 8-GPU nodes with %.0f CPUs and %lld GiB of memory per GPU (derived: the trace has GPUs "
      "only); a job of more than 8 GPUs is a gang of ceil(n/8) tasks of 8 GPUs; shoal::Schedule and the "
      "replay count GPUs as one pool, placing no task on a node (in reality a task of 8 GPUs needs a whole "
      "node); FIFO and the default policy know no durations (estimate 0); SJF and SRTF are clairvoyant "
      "references computed here; an SRTF preemption costs %lld s of service; every job submitted in the week "
      "runs to completion, however long (%d of this slice run over 7 days), and JCT is over all of them.\n",
      model.cpus_per_gpu, static_cast<long long>(model.memory_per_gpu >> 30),
      static_cast<long long>(model.preemption_cost_s), over_a_week);
  std::printf(
      "\n## VC %s, jobs submitted in the week from %s 00:00 (naive local time): %zu jobs, %.0f GPU-hours, the "
      "largest %d GPUs\n",
      flags->vc.c_str(), flags->week_start.c_str(), vc_week.size(), GpuHours(vc_week), largest_job);

  Result<OverSrtf> over_srtf = CompareOnOneVc(vc_week, flags->gpus);
  if (!over_srtf.ok()) return ExitWith(over_srtf.status());
  if (Status tenants = CompareTenants(week, largest_size); !tenants.ok()) return ExitWith(tenants);
  std::printf("\n");
  for (size_t size = 0; size < flags->gpus.size(); ++size) {
    std::printf("%d GPUs: default policy without service levels at %.2f x SRTF\n", flags->gpus[size],
                over_srtf->without_levels[size]);
  }
  for (size_t size = 0; size < flags->gpus.size(); ++size) {
    std::printf("%d GPUs: default policy at %.2f x SRTF\n", flags->gpus[size], over_srtf->default_policy[size]);
  }
  return 0;
}

}  // namespace
}  // namespace shoal::bench

int main(int argc, char** argv) { return shoal::bench::Main(argc, argv); }
