// The command line of `shoal train`: CaffeOnSpark's option names (single dash), plus a
// few of Shoal's own for running workers by hand outside a Shoal job.
//
// Contract: ParseTrainFlags returns the flags or kInvalidArgument naming the offending
// option and the fix (the CLI prints it and exits 2). An option it does not know is
// refused, never ignored. "--name" is accepted for "-name"; values follow as the next
// argument or after '='. CaffeOnSpark's options (caffe-grid's Config.scala) have their
// meaning or are refused with the reason: -connection ethernet (infiniband: refused, the
// collectives run over TCP), -persistent (what shoal train always does), -lmdb_partitions
// (must be the worker count: one contiguous part per worker), -resize, -imageRoot and
// -labelFile (refused: encoded images and CaffeOnSpark's conversion tools); -test with
// -features does the features only, with a warning, as CaffeOnSpark does.
// CheckClusterFlags judges the options that depend on the cluster, once it is known:
// `job_workers` is the Shoal job's worker count (0 outside a job).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::train {

enum class OutputFormat { kJson, kCsv };

struct TrainFlags {
  bool train = false;
  bool test = false;
  std::vector<std::string> features;  // blob names, from "-features b1,b2"
  std::string label;                  // the label blob written with the features
  OutputFormat output_format = OutputFormat::kJson;
  std::string conf;      // solver.prototxt
  int devices = 1;       // solver threads (replicas) per worker
  std::string model;     // the final model (written by -train, read by -test/-features)
  std::string weights;   // initial weights (.caffemodel) to fine-tune from
  std::string snapshot;  // a .solverstate to resume from
  std::string output;    // where -test and -features write
  // Shoal's own: outside a Shoal job, the cluster is given by hand.
  int cluster_size = 0;    // workers (0: from the Shoal job, else 1)
  int rank = -1;           // this worker's rank
  std::string rendezvous;  // a directory every worker sees (file store)
  int threads = 0;         // compute threads per solver (0: the cores shared out)
  int check_every = 0;     // compare the replicas' weights every N iterations (0: display)
  int lmdb_partitions = 0; // CaffeOnSpark's; 0: not given
  bool help = false;
  std::vector<std::string> warnings;  // for the CLI to print
};

Result<TrainFlags> ParseTrainFlags(const std::vector<std::string>& args);
Status CheckClusterFlags(const TrainFlags& flags, int job_workers);
std::string TrainUsage();

}  // namespace shoal::train
