#include "train/train_flags.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>

namespace shoal::train {
namespace {

Result<int> ParseInt(const std::string& name, const std::string& value, int min) {
  char* end = nullptr;
  long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < min || v > 1 << 20) {
    return InvalidArgument("-" + name + " takes a whole number >= " + std::to_string(min) + ", not '" + value + "'");
  }
  return static_cast<int>(v);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// CaffeOnSpark's options that shoal train cannot honour, and why.
Status Refused(const std::string& name) {
  if (name == "resize") {
    return InvalidArgument("-resize resizes encoded images (JPEG, PNG) to the data layer's size; shoal train reads raw "
                           "images of the net's size (IDX, LMDB Datums, CSV) and refuses encoded ones: resize them "
                           "when you build the data set, and leave -resize out");
  }
  return InvalidArgument("-" + name + " belongs to CaffeOnSpark's conversion tools (LMDB to SequenceFile or DataFrame), "
                         "which shoal train does not include; it reads LMDB, IDX and CSV sources directly: name them "
                         "in the data layer's `source`, and leave -" + name + " out");
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string TrainUsage() {
  return "usage: shoal train -conf solver.prototxt [-train] [-test | -features b1,b2 -label label]\n"
         "                   [-devices N] [-model URI] [-weights URI] [-snapshot URI] [-output URI]\n"
         "                   [-outputFormat json|csv]\n\n"
         "  -train               train the solver's net (TRAIN phase)\n"
         "  -test                test the model on the TEST phase data; the result goes to -output\n"
         "  -features b1,b2      write blobs b1,b2 of every TEST image to -output (one row each)\n"
         "  -label NAME          the label blob written with -features\n"
         "  -outputFormat F      json (default) or csv\n"
         "  -conf FILE           the solver prototxt (its `net` names the net prototxt)\n"
         "  -devices N           solver threads per worker, each with its own replica (default 1)\n"
         "  -model URI           the final model: written by -train, read by -test and -features\n"
         "  -weights URI         initial weights (.caffemodel) to fine-tune from\n"
         "  -snapshot URI        resume training from a .solverstate\n"
         "  -output URI          where -test and -features write\n\n"
         "CaffeOnSpark's -connection ethernet, -persistent and -lmdb_partitions N (N: the\n"
         "workers) are accepted; -connection infiniband, -resize, -imageRoot, -labelFile are not.\n\n"
         "In a Shoal job (framework: shoal-train) the workers find each other by themselves\n"
         "(-clusterSize, if given, must be the job's worker count).\n"
         "By hand: -clusterSize N -rank R -rendezvous DIR start worker R of N (DIR: a shared\n"
         "directory); -threads N sets the compute threads of each solver; -checkReplicas N\n"
         "compares every replica's weights every N iterations (default: each display).\n";
}

Result<TrainFlags> ParseTrainFlags(const std::vector<std::string>& args) {
  TrainFlags flags;
  using Setter = std::function<Status(const std::string&)>;
  auto text = [](std::string* field) -> Setter {
    return [field](const std::string& v) {
      *field = v;
      return Status::Ok();
    };
  };
  auto number = [](const char* name, int* field, int min) -> Setter {
    return [name, field, min](const std::string& v) -> Status {
      ASSIGN_OR_RETURN(*field, ParseInt(name, v, min));
      return Status::Ok();
    };
  };
  const std::map<std::string, Setter> with_value = {
      {"conf", text(&flags.conf)},
      {"model", text(&flags.model)},
      {"weights", text(&flags.weights)},
      {"snapshot", text(&flags.snapshot)},
      {"output", text(&flags.output)},
      {"label", text(&flags.label)},
      {"rendezvous", text(&flags.rendezvous)},
      {"devices", number("devices", &flags.devices, 1)},
      {"clusterSize", number("clusterSize", &flags.cluster_size, 1)},
      {"rank", number("rank", &flags.rank, 0)},
      {"threads", number("threads", &flags.threads, 1)},
      {"checkReplicas", number("checkReplicas", &flags.check_every, 1)},
      {"lmdb_partitions", number("lmdb_partitions", &flags.lmdb_partitions, 1)},
      {"connection",
       [](const std::string& v) -> Status {
         if (Lower(v) == "ethernet") return Status::Ok();
         if (Lower(v) == "infiniband") {
           return InvalidArgument("-connection infiniband: shoal train's collectives run over TCP, not RDMA; give "
                                  "-connection ethernet (or leave it out)");
         }
         return InvalidArgument("-connection is ethernet (shoal train's collectives run over TCP), not '" + v + "'");
       }},
      {"imageRoot", [](const std::string&) { return Refused("imageRoot"); }},
      {"labelFile", [](const std::string&) { return Refused("labelFile"); }},
      {"features",
       [&flags](const std::string& v) -> Status {
         flags.features = SplitComma(v);
         if (flags.features.empty()) return InvalidArgument("-features takes blob names, e.g. -features ip1,ip2");
         return Status::Ok();
       }},
      {"outputFormat",
       [&flags](const std::string& v) -> Status {
         if (v == "json") flags.output_format = OutputFormat::kJson;
         else if (v == "csv") flags.output_format = OutputFormat::kCsv;
         else return InvalidArgument("-outputFormat is json or csv, not '" + v + "'");
         return Status::Ok();
       }},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') return InvalidArgument("unexpected argument '" + arg + "'\n" + TrainUsage());
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "train" || name == "test" || name == "help" || name == "h" || name == "persistent" || name == "resize") {
      if (has_value) return InvalidArgument("-" + name + " takes no value");
      if (name == "resize") return Refused(name);
      // -persistent (CaffeOnSpark: keep the training data on local disk) is what every
      // worker does: its partition stays in memory, a remote source is cached on disk.
      if (name != "persistent") (name == "train" ? flags.train : name == "test" ? flags.test : flags.help) = true;
      continue;
    }
    auto setter = with_value.find(name);
    if (setter == with_value.end()) return InvalidArgument("unknown option '" + arg + "'\n" + TrainUsage());
    if (!has_value) {
      if (i + 1 >= args.size()) return InvalidArgument("-" + name + " needs a value");
      value = args[++i];
    }
    RETURN_IF_ERROR(setter->second(value));
  }
  if (flags.help) return flags;
  if (flags.conf.empty()) return InvalidArgument("-conf solver.prototxt is required\n" + TrainUsage());
  if (!flags.train && !flags.test && flags.features.empty()) {
    return InvalidArgument("say what to do: -train, -test and/or -features b1,b2");
  }
  if (flags.test && !flags.features.empty()) {
    flags.test = false;
    flags.warnings.push_back("both -test and -features are given: writing the features only, as CaffeOnSpark does "
                             "(run -test on its own for the test)");
  }
  if (!flags.features.empty() && flags.output.empty()) return InvalidArgument("-features needs -output URI (where the rows go)");
  if (!flags.train && !flags.snapshot.empty()) return InvalidArgument("-snapshot resumes training: add -train");
  if (!flags.train && flags.model.empty() && flags.weights.empty()) {
    return InvalidArgument("-test and -features need the trained model: give -model URI (or -weights URI)");
  }
  if (flags.train && flags.model.empty()) return InvalidArgument("-train needs -model URI (where the final model goes)");
  if ((flags.rank >= 0 || !flags.rendezvous.empty()) && flags.cluster_size == 0) {
    return InvalidArgument("-rank and -rendezvous go with -clusterSize N");
  }
  if (flags.cluster_size > 0 && flags.rank >= flags.cluster_size) {
    return InvalidArgument("-rank " + std::to_string(flags.rank) + " is not below -clusterSize " + std::to_string(flags.cluster_size));
  }
  return flags;
}

Status CheckClusterFlags(const TrainFlags& flags, int job_workers) {
  const std::string size = std::to_string(flags.cluster_size);
  if (job_workers > 0) {
    if (flags.rank >= 0 || !flags.rendezvous.empty()) {
      return InvalidArgument("-rank and -rendezvous start workers by hand; in a Shoal job the job places its workers: "
                             "leave them out");
    }
    if (flags.cluster_size > 0 && flags.cluster_size != job_workers) {
      return InvalidArgument("-clusterSize " + size + " does not match this Shoal job's " + std::to_string(job_workers) +
                             " workers: give -clusterSize " + std::to_string(job_workers) +
                             " or leave it out (the job's `instances` sets the workers)");
    }
  } else if (flags.cluster_size > 1 && (flags.rank < 0 || flags.rendezvous.empty())) {
    return InvalidArgument("-clusterSize " + size + " outside a Shoal job needs -rank R and -rendezvous DIR for each worker "
                           "(or run it as a Shoal job with instances: " + size + ")");
  }
  const int workers = job_workers > 0 ? job_workers : std::max(1, flags.cluster_size);
  if (flags.lmdb_partitions > 0 && flags.lmdb_partitions != workers) {
    return InvalidArgument("-lmdb_partitions " + std::to_string(flags.lmdb_partitions) +
                           ": shoal train reads a source in one contiguous part per worker, " + std::to_string(workers) +
                           " here; give -lmdb_partitions " + std::to_string(workers) + " or leave it out");
  }
  return Status::Ok();
}

}  // namespace shoal::train
