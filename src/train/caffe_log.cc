#include "train/caffe_log.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace shoal::train {
namespace {

std::vector<std::string> OutputLines(const char* label, std::vector<NetOutput> outputs) {
  std::sort(outputs.begin(), outputs.end(), [](const NetOutput& a, const NetOutput& b) { return a.name < b.name; });
  std::vector<std::string> lines;
  int index = 0;
  for (const auto& out : outputs) {
    for (float v : out.values) {
      std::string line = std::string("    ") + label + " net output #" + std::to_string(index++) + ": " + out.name + " = " +
                         CaffeNumber(v);
      if (out.loss_weight != 0) {
        line += " (* " + CaffeNumber(out.loss_weight) + " = " + CaffeNumber(out.loss_weight * v) + " loss)";
      }
      lines.push_back(line);
    }
  }
  return lines;
}

}  // namespace

std::string GlogPrefix(double unix_seconds, int thread_id, const char* where) {
  const auto whole = static_cast<std::time_t>(unix_seconds);
  const auto micros = static_cast<long>((unix_seconds - static_cast<double>(whole)) * 1e6);
  std::tm tm{};
  localtime_r(&whole, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "I%02d%02d %02d:%02d:%02d.%06ld %5d %s] ", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_sec, micros, thread_id, where);
  return buf;
}

std::string CaffeLine(const char* where, const std::string& text) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const double seconds = static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) / 1e6;
  return GlogPrefix(seconds, static_cast<int>(getpid()), where) + text;
}

std::string CaffeNumber(double value) {
  std::ostringstream out;
  out << static_cast<float>(value);
  return out.str();
}

void SmoothedLoss::Add(float loss) {
  if (static_cast<int>(losses_.size()) < window_) {
    losses_.push_back(loss);
    const float size = static_cast<float>(losses_.size());
    smoothed_ = (smoothed_ * (size - 1) + loss) / size;
  } else {
    const auto idx = static_cast<size_t>(added_ % window_);
    smoothed_ += (loss - losses_[idx]) / static_cast<float>(window_);
    losses_[idx] = loss;
  }
  ++added_;
}

std::vector<std::string> TrainDisplayLines(int64_t iter, double iter_per_s, double lapse_s, int display, float loss,
                                           std::vector<NetOutput> outputs) {
  std::vector<std::string> lines = {"Iteration " + std::to_string(iter) + " (" + CaffeNumber(iter_per_s) + " iter/s, " +
                                    CaffeNumber(lapse_s) + "s/" + std::to_string(display) + " iters), loss = " + CaffeNumber(loss)};
  for (auto& line : OutputLines("Train", std::move(outputs))) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> TestOutputLines(std::vector<NetOutput> outputs) { return OutputLines("Test", std::move(outputs)); }

}  // namespace shoal::train
