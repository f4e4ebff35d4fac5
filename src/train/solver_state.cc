#include "train/solver_state.h"

#include <algorithm>

#include "train/uri.h"

namespace shoal::train {
namespace {

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string WithoutExtension(const std::string& name) {
  auto dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

// The values of a BlobProto (Caffe writes float data; double_data from a double net).
std::vector<float> ValuesOf(const caffe::BlobProto& blob) {
  if (blob.data_size() > 0 || blob.double_data_size() == 0) return {blob.data().begin(), blob.data().end()};
  return {blob.double_data().begin(), blob.double_data().end()};
}

std::string Plural(int64_t n, const std::string& what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

}  // namespace

std::string SnapshotBase(const std::string& model, const std::string& snapshot_prefix, int64_t iter) {
  std::string name = snapshot_prefix.empty() ? WithoutExtension(Basename(model)) : Basename(snapshot_prefix);
  return UriJoin(UriDir(model), name + "_iter_" + std::to_string(iter));
}

SnapshotFiles SnapshotFilesOf(const std::string& snapshot_base, bool hdf5) {
  const char* ext = hdf5 ? ".h5" : "";
  return {snapshot_base + ".caffemodel" + ext, snapshot_base + ".solverstate" + ext};
}

std::string LearnedNetPath(const std::string& model_file) { return PlainUri(model_file); }

caffe::SolverState MakeSolverStateProto(int64_t iter, const std::string& learned_net, int current_step,
                                        const std::vector<ParamBlob>& params, const std::vector<const float*>& histories) {
  caffe::SolverState state;
  state.set_iter(static_cast<int>(iter));
  state.set_learned_net(learned_net);
  state.set_current_step(current_step);
  for (const float* history : histories) {
    for (const auto& p : params) {
      caffe::BlobProto* blob = state.add_history();
      for (int64_t d : p.shape) blob->mutable_shape()->add_dim(d);
      blob->mutable_data()->Add(history + p.offset, history + p.offset + p.numel);
    }
  }
  return state;
}

Status ReadHistories(const caffe::SolverState& state, const std::vector<ParamBlob>& params, int64_t total,
                     const std::vector<float*>& histories, const std::string& what) {
  const int64_t sets = static_cast<int64_t>(histories.size());
  const int64_t blobs = state.history_size();
  if (blobs == sets * static_cast<int64_t>(params.size())) {
    // Caffe's layout: set after set, one blob per parameter blob.
    for (int64_t i = 0; i < blobs; ++i) {
      const ParamBlob& p = params[static_cast<size_t>(i % static_cast<int64_t>(params.size()))];
      std::vector<float> values = ValuesOf(state.history(static_cast<int>(i)));
      if (static_cast<int64_t>(values.size()) != p.numel) {
        return InvalidArgument(what + ": history blob " + std::to_string(i) + " has " + Plural(static_cast<int64_t>(values.size()), "value") +
                               "; this net's parameter blob " + p.name + " has " + std::to_string(p.numel) +
                               " (a snapshot of another net?)");
      }
      std::copy(values.begin(), values.end(), histories[static_cast<size_t>(i / static_cast<int64_t>(params.size()))] + p.offset);
    }
    return Status::Ok();
  }
  if (blobs == sets && state.has_shoal_position()) {
    // An older Shoal's layout: one flat blob per history, over the whole buffer.
    for (int64_t s = 0; s < sets; ++s) {
      std::vector<float> values = ValuesOf(state.history(static_cast<int>(s)));
      if (static_cast<int64_t>(values.size()) != total) {
        return InvalidArgument(what + " has " + Plural(static_cast<int64_t>(values.size()), "history value") + "; this net needs " +
                               std::to_string(total) + " (a snapshot of another net?)");
      }
      std::copy(values.begin(), values.end(), histories[static_cast<size_t>(s)]);
    }
    return Status::Ok();
  }
  return InvalidArgument(what + " holds " + Plural(blobs, "history blob") + "; this net's solver keeps " +
                         std::to_string(sets * static_cast<int64_t>(params.size())) + " (" +
                         Plural(static_cast<int64_t>(params.size()), "learnable blob") +
                         (sets == 2 ? ", two histories each" : "") +
                         "): a snapshot of another net, or of a solver type with " + (sets == 2 ? "one history (SGD, Nesterov, AdaGrad, RMSProp)" : "two (AdaDelta, Adam)") + "?");
}

std::vector<std::string> LearnedNetCandidates(const std::string& state_uri, const std::string& learned_net) {
  std::vector<std::string> out = {UriJoin(UriDir(state_uri), Basename(learned_net))};
  if (learned_net != out[0]) out.push_back(learned_net);
  return out;
}

}  // namespace shoal::train
