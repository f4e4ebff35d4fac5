// shoal-train: the executable behind `shoal train` (see train_command.h). main is thin:
// flags, the cluster, then the trainer.
#include <cstdio>
#include <string>
#include <vector>

#include "train/cluster.h"
#include "train/managed_checkpoint.h"
#include "train/trainer.h"
#include "train/train_flags.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto flags = shoal::train::ParseTrainFlags(args);
  if (!flags.ok()) {
    std::fprintf(stderr, "shoal train: %s\n", flags.status().message().c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(shoal::train::TrainUsage().c_str(), stdout);
    return 0;
  }
  for (const auto& warning : flags->warnings) std::fprintf(stderr, "shoal train: warning: %s\n", warning.c_str());
  if (auto bad = shoal::train::CheckClusterFlags(*flags, shoal::train::ShoalJobWorkers()); !bad.ok()) {
    std::fprintf(stderr, "shoal train: %s\n", bad.message().c_str());
    return 2;
  }
  auto cluster = shoal::train::Cluster::Join(*flags);
  if (!cluster.ok()) {
    std::fprintf(stderr, "shoal train: cannot join the other workers: %s\n", cluster.status().message().c_str());
    return 1;
  }
  // During training SIGINT and SIGTERM mean: snapshot, then end (train/managed_checkpoint.h).
  shoal::Status status = shoal::train::RunTrainer(*flags, **cluster);
  if (!status.ok()) {
    std::fprintf(stderr, "shoal train: %s\n", status.message().c_str());
    if (status.code() == shoal::StatusCode::kAborted && shoal::train::StopRequested()) return 128 + shoal::train::StopSignal();
    return status.code() == shoal::StatusCode::kInvalidArgument || status.code() == shoal::StatusCode::kNotFound ? 2 : 1;
  }
  return 0;
}
