// Histogram: a Prometheus-style histogram of durations in seconds (cumulative buckets,
// sum and count), and the text-format writer for it and for plain gauges.
//
// Contract:
//  - Buckets are fixed at construction (upper bounds in seconds, ascending); Observe
//    counts a value in every bucket whose bound is >= it, and in +Inf.
//  - Snapshot copies the counts, so rendering never holds the lock.
//  - AppendHistogram/AppendGauge write Prometheus' text exposition format 0.0.4;
//    label values are escaped (\\, \", \n).
// Thread-safety: Observe and Snapshot are safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace shoal {

struct HistogramSnapshot {
  std::vector<double> bounds;
  std::vector<uint64_t> counts;  // per bound, cumulative; the +Inf count is `count`
  double sum = 0;
  uint64_t count = 0;
};

class Histogram {
 public:
  // 0.5 ms to 10 s: request and round-trip latencies.
  static std::vector<double> LatencyBounds();
  explicit Histogram(std::vector<double> bounds = LatencyBounds());

  void Observe(double seconds);
  HistogramSnapshot Snapshot() const;

 private:
  mutable std::mutex mutex_;
  HistogramSnapshot data_;  // GUARDED_BY(mutex_)
};

using Labels = std::vector<std::pair<std::string, std::string>>;

// Writes `# HELP` and `# TYPE` for a metric family.
void AppendFamilyHeader(std::string& out, const std::string& name, const std::string& type, const std::string& help);
void AppendGauge(std::string& out, const std::string& name, const Labels& labels, double value);
void AppendHistogram(std::string& out, const std::string& name, const Labels& labels, const HistogramSnapshot& h);

}  // namespace shoal
