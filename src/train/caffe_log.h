// Caffe's log lines, so that tools written for Caffe's logs (Caffe's tools/extra/
// parse_log.py, plotting scripts, dashboards) read `shoal train`'s: the same words, the
// same numbers (C++ stream formatting of floats, 6 significant digits), the same moments,
// each line behind glog's prefix "I1203 10:17:34.123456  1234 solver.cpp:218] " with a
// place in Caffe's sources that logs the line (parse_log.py takes its times from it).
//
// Contract:
//  - CaffeLine(where, text): glog's prefix (local time, this process's id) + text.
//  - SmoothedLoss is Caffe's Solver::UpdateSmoothedLoss: the mean of the last
//    `average_loss` losses (fewer at the start), updated as Caffe does in float.
//  - TrainDisplayLines: what Caffe's Solver::Step prints at iteration N when N % display
//    == 0, before the update: "Iteration N (X iter/s, Ys/D iters), loss = L", then
//    "    Train net output #k: name = v" for every value of every output blob (by blob
//    name, as Caffe orders them), with " (* w = w*v loss)" for a loss blob of weight w.
//  - TestOutputLines: "    Test net output #k: name = v", the same way.
// Thread-safety: pure functions; SmoothedLoss belongs to one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shoal::train {

// Where Caffe logs each line from (solver.cpp and sgd_solver.cpp, as in Caffe 1.0's logs).
inline constexpr char kLogIteration[] = "solver.cpp:218";
inline constexpr char kLogTrainOutput[] = "solver.cpp:237";
inline constexpr char kLogRate[] = "sgd_solver.cpp:105";
inline constexpr char kLogTesting[] = "solver.cpp:330";
inline constexpr char kLogTestOutput[] = "solver.cpp:397";
inline constexpr char kLogSnapshot[] = "solver.cpp:447";
inline constexpr char kLogSolverState[] = "sgd_solver.cpp:273";
inline constexpr char kLogSolving[] = "solver.cpp:289";
inline constexpr char kLogPolicy[] = "solver.cpp:290";
inline constexpr char kLogStoppedEarly[] = "solver.cpp:307";
inline constexpr char kLogDone[] = "solver.cpp:315";

std::string CaffeLine(const char* where, const std::string& text);
// The prefix alone, for a given time (seconds since the epoch, local time) and thread id.
std::string GlogPrefix(double unix_seconds, int thread_id, const char* where);

// A float as Caffe's LOG(INFO) << value prints it.
std::string CaffeNumber(double value);

class SmoothedLoss {
 public:
  explicit SmoothedLoss(int average_loss) : window_(average_loss < 1 ? 1 : average_loss) {}
  void Add(float loss);
  float value() const { return smoothed_; }

 private:
  int window_;
  int64_t added_ = 0;
  std::vector<float> losses_;
  float smoothed_ = 0;
};

// One output blob of a net: its values (averaged over the replicas) and loss weight.
struct NetOutput {
  std::string name;
  std::vector<float> values;
  float loss_weight = 0;
};

std::vector<std::string> TrainDisplayLines(int64_t iter, double iter_per_s, double lapse_s, int display, float loss,
                                           std::vector<NetOutput> outputs);
std::vector<std::string> TestOutputLines(std::vector<NetOutput> outputs);

}  // namespace shoal::train
