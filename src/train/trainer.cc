#include "train/trainer.h"

#include <sys/resource.h>
#include <torch/torch.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "collective/allreduce.h"
#include "collective/broadcast.h"
#include "train/caffe_log.h"
#include "train/data_source.h"
#include "train/gradient_buckets.h"
#include "train/hdf5_snapshot.h"
#include "train/layers.h"
#include "train/learning_rate.h"
#include "train/managed_checkpoint.h"
#include "train/net.h"
#include "train/partition.h"
#include "train/prototxt.h"
#include "train/solver_state.h"
#include "train/solver_update.h"
#include "train/uri.h"

namespace shoal::train {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- Data layers -------------------------------------------------------------------

struct Feed {
  const caffe::LayerParameter* layer = nullptr;
  DataSpec spec;
  Transform transform;
  int64_t batch = 0;
  Dataset data;
  ItemShape shape;
};

Backend BackendOf(caffe::DataParameter::DB db, bool has) {
  if (!has) return Backend::kAuto;
  switch (db) {
    case caffe::DataParameter::LMDB: return Backend::kLmdb;
    case caffe::DataParameter::IDX: return Backend::kIdx;
    case caffe::DataParameter::CSV: return Backend::kCsv;
    default: return Backend::kAuto;
  }
}

// A mean_file: Caffe's BlobProto of one mean image (binaryproto).
Result<std::vector<float>> ReadMeanImage(const std::string& uri) {
  RETURN_IF_ERROR(CheckUri(uri, "mean_file"));
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(uri));
  caffe::BlobProto blob;
  if (!blob.ParseFromString(bytes) || (blob.data_size() == 0 && blob.double_data_size() == 0)) {
    return InvalidArgument("mean_file " + uri + " is not a Caffe mean image (a BlobProto .binaryproto, as compute_image_mean writes)");
  }
  if (blob.data_size() > 0) return std::vector<float>(blob.data().begin(), blob.data().end());
  return std::vector<float>(blob.double_data().begin(), blob.double_data().end());
}

// The net's data layer (one per phase) and what it reads.
Result<Feed> FeedOf(const caffe::NetParameter& def, const std::string& phase) {
  std::vector<const caffe::LayerParameter*> layers;
  for (const auto& l : def.layer()) {
    if (l.type() == "Data" || l.type() == "MemoryData") layers.push_back(&l);
  }
  if (layers.size() != 1) {
    return InvalidArgument("the " + phase + " net needs exactly one Data or MemoryData layer; it has " +
                           std::to_string(layers.size()));
  }
  Feed feed;
  feed.layer = layers[0];
  const auto& l = *feed.layer;
  if (l.type() == "Data") {
    feed.spec.source = l.data_param().source();
    feed.spec.label_source = l.data_param().label_source();
    feed.spec.backend = BackendOf(l.data_param().backend(), l.data_param().has_backend());
    feed.batch = l.data_param().batch_size();
  } else {
    const auto& p = l.memory_data_param();
    feed.spec.source = p.source();
    feed.spec.label_source = p.label_source();
    feed.spec.backend = BackendOf(p.backend(), p.has_backend());
    feed.spec.channels = static_cast<int>(p.channels());
    feed.spec.height = static_cast<int>(p.height());
    feed.spec.width = static_cast<int>(p.width());
    feed.batch = p.batch_size();
  }
  const auto& t = l.transform_param();
  feed.transform.scale = t.scale();
  feed.transform.mirror = t.mirror();
  feed.transform.crop_size = static_cast<int>(t.crop_size());
  feed.transform.mean_value.assign(t.mean_value().begin(), t.mean_value().end());
  if (t.has_mean_file()) {
    auto mean = ReadMeanImage(t.mean_file());
    if (!mean.ok()) return mean.status().WithContext("layer '" + l.name() + "'");
    feed.transform.mean_image = std::move(mean).value();
  }
  return feed;
}

Status LoadFeed(Feed& feed, int64_t begin, int64_t end) {
  auto data = LoadRange(feed.spec, begin, end);
  if (!data.ok()) return data.status().WithContext("layer '" + feed.layer->name() + "'");
  feed.data = std::move(data).value();
  auto shape = TransformedShape(feed.data, feed.transform);
  if (!shape.ok()) return shape.status().WithContext("layer '" + feed.layer->name() + "'");
  feed.shape = *shape;
  return Status::Ok();
}

// Reads only a record or two to learn the item shape (nets are built before loading).
Result<std::map<std::string, std::vector<int64_t>>> InputShapes(Feed& probe) {
  Feed copy = probe;
  ASSIGN_OR_RETURN(int64_t n, CountRecords(copy.spec));
  if (n < 1) return InvalidArgument("layer '" + probe.layer->name() + "': the source " + probe.spec.source + " is empty");
  RETURN_IF_ERROR(LoadFeed(copy, 0, 1));
  return std::map<std::string, std::vector<int64_t>>{
      {probe.layer->name(), {copy.shape.channels, copy.shape.height, copy.shape.width}}};
}

// Inputs of one batch: records [first, first + count) of the feed.
struct Batch {
  std::vector<float> values, labels;
};

std::map<std::string, torch::Tensor> MakeInputs(const Feed& feed, bool train, uint64_t seed, int64_t first,
                                                int64_t count, Batch& batch) {
  batch.values.resize(static_cast<size_t>(count * feed.shape.size()));
  batch.labels.resize(static_cast<size_t>(count));
  FillBatch(feed.data, feed.transform, train, seed, first, count, batch.values.data(), batch.labels.data());
  std::map<std::string, torch::Tensor> in;
  in[feed.layer->top(0)] =
      torch::from_blob(batch.values.data(), {count, feed.shape.channels, feed.shape.height, feed.shape.width});
  if (feed.layer->top_size() > 1) in[feed.layer->top(1)] = torch::from_blob(batch.labels.data(), {count});
  return in;
}

// ---- Solver threads ----------------------------------------------------------------

// Runs f(d) for d = 0..n-1, d = 0 on the calling thread and the others on persistent
// threads (each sets its own compute-thread count once).
class ReplicaThreads {
 public:
  ReplicaThreads(int n, int compute_threads) {
    for (int d = 1; d < n; ++d) {
      threads_.emplace_back([this, d, compute_threads] {
        at::set_num_threads(compute_threads);
        uint64_t seen = 0;
        for (;;) {
          std::function<void(int)> job;
          {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
          }
          job(d);
          std::lock_guard<std::mutex> lock(mu_);
          if (--pending_ == 0) done_.notify_all();
        }
      });
    }
  }
  ~ReplicaThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void Run(const std::function<void(int)>& f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = f;
      pending_ = static_cast<int>(threads_.size());
      ++generation_;
    }
    cv_.notify_all();
    f(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  std::function<void(int)> job_;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

// ---- Collectives (no-ops for one worker) --------------------------------------------

Status SumAcrossWorkers(Cluster& cluster, float* data, size_t n) {
  if (cluster.comm() == nullptr) return Status::Ok();
  return collective::Allreduce(*cluster.comm(), data, n, collective::DataType::kFloat32, collective::ReduceOp::kSum);
}

Status SumAcrossWorkers(Cluster& cluster, std::vector<double>& v) {
  if (cluster.comm() == nullptr) return Status::Ok();
  return collective::Allreduce(*cluster.comm(), v.data(), v.size(), collective::DataType::kFloat64, collective::ReduceOp::kSum);
}

// ---- Solver (Caffe's formulas) --------------------------------------------------------

struct SolverState {
  std::vector<float> lr_mult, decay_mult;  // per element (0 for state blobs: no update)
  std::vector<std::pair<int64_t, int64_t>> state;  // (offset, count) of each state blob
  torch::Tensor history, history2;         // Caffe's history (and AdaDelta's and Adam's second one)
};

SolverState MakeSolverState(const Layout& layout, const std::string& type) {
  SolverState s;
  s.lr_mult.resize(layout.total);
  s.decay_mult.resize(layout.total);
  for (const auto& b : layout.blobs) {
    if (b.owner >= 0) continue;  // shares its owner's storage, multipliers and history (Caffe's learnable_params_)
    std::fill_n(s.lr_mult.begin() + b.offset, b.numel, b.learnable ? b.lr_mult : 0.0f);
    std::fill_n(s.decay_mult.begin() + b.offset, b.numel, b.learnable ? b.decay_mult : 0.0f);
    if (!b.learnable) s.state.emplace_back(b.offset, b.numel);
  }
  s.history = torch::zeros({layout.total});
  if (UsesSecondHistory(type)) s.history2 = torch::zeros({layout.total});
  return s;
}

// Caffe's update (solver_update.h); state blobs (BatchNorm's) take the averaged value that
// travelled in their gradient slot.
void ApplyUpdate(const caffe::SolverParameter& p, SolverState& s, torch::Tensor values, torch::Tensor grads,
                 double rate, int64_t iter) {
  UpdateArgs args;
  args.type = p.type();
  args.rate = static_cast<float>(rate);
  args.momentum = p.momentum();
  args.momentum2 = p.momentum2();
  args.delta = p.delta();
  args.weight_decay = p.weight_decay();
  args.rms_decay = p.rms_decay();
  args.iter = iter;
  float* w = values.data_ptr<float>();
  const float* g = grads.data_ptr<float>();
  ApplySolverUpdate(args, values.numel(), w, g, s.history.data_ptr<float>(),
                    s.history2.defined() ? s.history2.data_ptr<float>() : nullptr, s.lr_mult.data(), s.decay_mult.data());
  for (const auto& [offset, count] : s.state) std::copy_n(g + offset, count, w + offset);
}

double CpuSeconds() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

uint64_t HashOf(const torch::Tensor& t) {
  const auto* p = reinterpret_cast<const uint64_t*>(t.data_ptr<float>());
  int64_t words = t.numel() / 2;
  uint64_t h = 1469598103934665603ULL;
  for (int64_t i = 0; i < words; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  if (t.numel() % 2 != 0) {
    uint32_t last;
    std::memcpy(&last, t.data_ptr<float>() + t.numel() - 1, 4);
    h = (h ^ last) * 1099511628211ULL;
  }
  return h;
}

// ---- Snapshots -----------------------------------------------------------------------

// Caffe's learnable_params_: every parameter blob with its own storage, in the net's order.
std::vector<ParamBlob> ParamBlobsOf(const Layout& layout) {
  std::vector<ParamBlob> out;
  for (const auto& b : layout.blobs) {
    if (b.owner < 0) out.push_back({b.layer + "/" + std::to_string(b.index), b.shape, b.offset, b.numel});
  }
  return out;
}

std::vector<float*> Histories(SolverState& s) {
  std::vector<float*> out = {s.history.data_ptr<float>()};
  if (s.history2.defined()) out.push_back(s.history2.data_ptr<float>());
  return out;
}

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The loss weight of a net's blob: that of the last layer that writes it (Caffe's
// blob_loss_weights_).
float BlobLossWeight(const caffe::NetParameter& def, const std::string& blob) {
  float weight = 0;
  for (const auto& layer : def.layer()) {
    for (int i = 0; i < layer.top_size(); ++i) {
      if (layer.top(i) == blob) weight = LossWeight(layer, i);
    }
  }
  return weight;
}

// A net's outputs after a Forward (Caffe's output_blobs): every value, and the loss weight.
std::vector<NetOutput> OutputsOf(const Net& net, const std::map<std::string, torch::Tensor>& blobs) {
  std::vector<NetOutput> out;
  for (const auto& name : net.outputs()) {
    torch::Tensor t = blobs.at(name).detach().to(torch::kFloat32).contiguous();
    out.push_back({name, {t.data_ptr<float>(), t.data_ptr<float>() + t.numel()}, BlobLossWeight(net.definition(), name)});
  }
  return out;
}

// When Caffe's display last printed (its iteration_timer_ and iterations_last_).
struct DisplayClock {
  std::chrono::steady_clock::time_point at;
  int64_t iter = 0;
};

std::string Serialize(const google::protobuf::Message& m) {
  std::string out;
  m.SerializeToString(&out);
  return out;
}

Result<caffe::NetParameter> ReadModel(const std::string& uri) {
  RETURN_IF_ERROR(CheckUri(uri, "model"));
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(uri));
  if (IsHdf5(bytes)) {
    auto model = ModelFromHdf5(bytes);
    if (!model.ok()) return InvalidArgument(uri + " " + model.status().message());
    return model;
  }
  caffe::NetParameter model;
  if (!model.ParseFromString(bytes)) return InvalidArgument(uri + " is not a .caffemodel (binary NetParameter)");
  return model;
}

// ---- Evaluation ------------------------------------------------------------------------

// Copies blobs from one net's flat buffer to another's by (layer, index).
void CopyShared(const Layout& from, const torch::Tensor& from_values, const Layout& to, torch::Tensor to_values) {
  torch::NoGradGuard no_grad;
  for (const auto& b : to.blobs) {
    const BlobInfo* src = from.Find(b.layer, b.index);
    if (src != nullptr && src->numel == b.numel) to_values.narrow(0, b.offset, b.numel).copy_(from_values.narrow(0, src->offset, b.numel));
  }
}

struct Scalars {
  std::vector<std::string> names;
  std::vector<double> sums;  // weighted by images
  double images = 0;
};

Status EvaluateBatches(Net& net, const Feed& feed, int64_t first, int64_t count, Scalars& out, Batch& batch,
                       const std::function<void(int64_t, int64_t, const std::map<std::string, torch::Tensor>&)>& each) {
  torch::NoGradGuard no_grad;
  for (int64_t done = 0; done < count;) {
    int64_t n = std::min<int64_t>(feed.batch, count - done);
    auto inputs = MakeInputs(feed, false, 0, first + done, n, batch);
    ASSIGN_OR_RETURN(auto blobs, net.Forward(inputs, false, 0));
    if (out.names.empty()) {
      for (const auto& name : net.outputs()) {
        if (blobs.at(name).numel() == 1) out.names.push_back(name);
      }
      out.sums.assign(out.names.size(), 0.0);
    }
    for (size_t i = 0; i < out.names.size(); ++i) out.sums[i] += blobs.at(out.names[i]).item<double>() * n;
    out.images += static_cast<double>(n);
    if (each) each(first + done, n, blobs);
    done += n;
  }
  return Status::Ok();
}

std::string FormatScalars(const Scalars& s) {
  std::string out;
  for (size_t i = 0; i < s.names.size(); ++i) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "%s%s = %.6g", i ? ", " : "", s.names[i].c_str(), s.images > 0 ? s.sums[i] / s.images : 0.0);
    out += buf;
  }
  return out;
}

// Sums every worker's scalars (same names on every worker).
Status Reduce(Cluster& cluster, Scalars& s) {
  std::vector<double> v = s.sums;
  v.push_back(s.images);
  RETURN_IF_ERROR(SumAcrossWorkers(cluster, v));
  s.images = v.back();
  v.pop_back();
  s.sums = v;
  return Status::Ok();
}

void Report(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

// A line of Caffe's (caffe_log.h), logged from `where` in Caffe's sources.
void Log(const char* where, const std::string& text) { Report(CaffeLine(where, text)); }

// ---- The run ---------------------------------------------------------------------------

class Run {
 public:
  Run(const TrainFlags& flags, Cluster& cluster) : flags_(flags), cluster_(cluster) {}

  Status Go() {
    ASSIGN_OR_RETURN(solver_, LoadSolver(flags_.conf));
    RETURN_IF_ERROR(CheckUri(solver_.net(), flags_.conf + ": the solver's net"));
    ASSIGN_OR_RETURN(std::string net_path, ResolveNetPath(solver_, flags_.conf));
    ASSIGN_OR_RETURN(caffe::NetParameter def, LoadNet(net_path));
    if (solver_.snapshot_format() == caffe::SolverParameter::HDF5) {
      for (const auto& layer : def.layer()) {
        if (layer.name().find('/') == std::string::npos) continue;
        return InvalidArgument(flags_.conf + ": snapshot_format HDF5 names a group after each layer, and layer '" + layer.name() +
                               "' holds a '/'; use snapshot_format: BINARYPROTO");
      }
    }
    caffe::NetState train_state = solver_.train_state();
    train_state.set_phase(caffe::TRAIN);
    train_def_ = NetForState(def, train_state);
    // Caffe's test nets: one per test_iter (at least one for -test and -features), each in
    // its test_state.
    for (int i = 0; i < std::max(1, solver_.test_iter_size()); ++i) {
      caffe::NetState state = i < solver_.test_state_size() ? solver_.test_state(i) : caffe::NetState();
      state.set_phase(caffe::TEST);
      tests_.emplace_back();
      tests_.back().def = NetForState(def, state);
    }
    for (const auto* uri : {&flags_.model, &flags_.weights, &flags_.snapshot, &flags_.output}) {
      if (!uri->empty()) RETURN_IF_ERROR(CheckUri(*uri, "URI"));
    }
    const auto& place = cluster_.place();
    int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    compute_threads_ = flags_.threads > 0 ? flags_.threads : std::max(1, cores / (flags_.devices * place.local_workers));
    at::set_num_threads(compute_threads_);
    seed_ = solver_.random_seed() >= 0 ? static_cast<uint64_t>(solver_.random_seed()) : 1701;
    if (flags_.train) RETURN_IF_ERROR(Train());
    if (flags_.test || !flags_.features.empty()) RETURN_IF_ERROR(Evaluate());
    return Status::Ok();
  }

 private:
  bool Leader() const { return cluster_.place().rank == 0; }

  // Test net `i` and its data: the worker's evaluation range.
  Status PrepareTest(size_t i) {
    TestNet& t = tests_[i];
    if (t.net) return Status::Ok();
    const std::string what = tests_.size() > 1 ? "TEST net #" + std::to_string(i) : "TEST";
    ASSIGN_OR_RETURN(t.feed, FeedOf(t.def, what));
    ASSIGN_OR_RETURN(auto shapes, InputShapes(t.feed));
    ASSIGN_OR_RETURN(t.net, Net::Create(t.def, caffe::TEST, shapes));
    t.values = torch::zeros({t.net->layout().total});
    t.net->Bind(t.values, torch::zeros({t.net->layout().total}));
    ASSIGN_OR_RETURN(int64_t n, CountRecords(t.feed.spec));
    t.range = EvalRange(n, cluster_.place().size, cluster_.place().rank);
    RETURN_IF_ERROR(LoadFeed(t.feed, t.range.begin, t.range.end));
    return Status::Ok();
  }

  // Caffe's in-training test: for each test net, test_iter batches on each worker, averaged.
  Status TestDuringTraining(int64_t iter) {
    for (size_t k = 0; k < tests_.size(); ++k) {
      RETURN_IF_ERROR(PrepareTest(k));
      TestNet& t = tests_[k];
      CopyShared(nets_[0]->layout(), values_[0], t.net->layout(), t.values);
      Scalars s;
      Batch batch;
      int64_t size = t.range.end - t.range.begin;
      int64_t per = t.feed.batch;
      for (int i = 0; i < solver_.test_iter(static_cast<int>(k)); ++i) {
        int64_t start = (i * per) % std::max<int64_t>(size, 1);
        int64_t n = std::min(per, size - start);
        RETURN_IF_ERROR(EvaluateBatches(*t.net, t.feed, t.range.begin + start, n, s, batch, nullptr));
      }
      RETURN_IF_ERROR(Reduce(cluster_, s));
      if (!Leader()) continue;
      Log(kLogTesting, "Iteration " + std::to_string(iter) + ", Testing net (#" + std::to_string(k) + ")");
      std::vector<NetOutput> outputs;
      double loss = 0;
      for (size_t i = 0; i < s.names.size(); ++i) {
        float mean = static_cast<float>(s.sums[i] / std::max(1.0, s.images));
        float weight = BlobLossWeight(t.def, s.names[i]);
        outputs.push_back({s.names[i], {mean}, weight});
        loss += static_cast<double>(mean) * weight;
      }
      if (solver_.test_compute_loss()) Log(kLogTestOutput, "Test loss: " + CaffeNumber(loss));
      for (const auto& line : TestOutputLines(outputs)) Log(kLogTestOutput, line);
      // The UI's charts: test_<output>, and test<k>_<output> for the nets after the first.
      const std::string prefix = k == 0 ? " test_" : " test" + std::to_string(k) + "_";
      std::string metric = "reporter metric:";
      for (size_t i = 0; i < s.names.size(); ++i) {
        char buf[96];
        std::snprintf(buf, sizeof(buf), "%s%s=%.6g", prefix.c_str(), s.names[i].c_str(), s.sums[i] / std::max(1.0, s.images));
        metric += buf;
      }
      Report(metric + " step=" + std::to_string(iter));
    }
    return Status::Ok();
  }

  // Caffe's Snapshot: the weights, then the solver state (solver_state.h), each written
  // under a temporary name and renamed into place.
  Status Snapshot(int64_t iter) {
    if (!Leader()) return Status::Ok();
    const std::string base = SnapshotBase(flags_.model, solver_.snapshot_prefix(), iter);
    // Caffe's two formats: binary protos, or HDF5 files (shared blobs under their owner only).
    const bool hdf5 = solver_.snapshot_format() == caffe::SolverParameter::HDF5;
    const auto [model_file, state_file] = SnapshotFilesOf(base, hdf5);
    const char* format = hdf5 ? "HDF5 file " : "binary proto file ";
    std::string weights;
    if (hdf5) {
      ASSIGN_OR_RETURN(weights, ModelToHdf5(nets_[0]->ToProto(/*owners_only=*/true)));
    } else {
      weights = Serialize(nets_[0]->ToProto());
    }
    Log(kLogSnapshot, "Snapshotting to " + std::string(format) + PlainUri(model_file));
    RETURN_IF_ERROR(WriteFileAtomic(model_file, weights));
    std::vector<float*> histories = Histories(solver_state_);
    caffe::SolverState state = MakeSolverStateProto(iter, LearnedNetPath(model_file), CurrentStep(solver_, iter),
                                                    ParamBlobsOf(nets_[0]->layout()), {histories.begin(), histories.end()});
    auto* pos = state.mutable_shoal_position();
    pos->set_epoch(iter / layout_.steps_per_epoch);
    pos->set_step_in_epoch(iter % layout_.steps_per_epoch);
    pos->set_workers(cluster_.place().size);
    pos->set_devices(flags_.devices);
    pos->set_batch_size(static_cast<int>(layout_.batch));
    pos->set_solver_type(solver_.type());
    std::string solverstate;
    if (hdf5) {
      ASSIGN_OR_RETURN(solverstate, SolverStateToHdf5(state));
    } else {
      solverstate = Serialize(state);
    }
    Log(kLogSolverState, "Snapshotting solver state to " + std::string(format) + PlainUri(state_file));
    RETURN_IF_ERROR(WriteFileAtomic(state_file, solverstate));
    if (managed_.enabled()) {
      RETURN_IF_ERROR(managed_.Publish({{Basename(model_file), weights}, {Basename(state_file), solverstate}}));
      Report("Checkpoint of iteration " + std::to_string(iter) + " handed to Shoal");
    }
    return Status::Ok();
  }

  Result<int64_t> Restore(const std::string& uri) {
    ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(uri));
    caffe::SolverState state;
    if (IsHdf5(bytes)) {
      auto hdf5 = SolverStateFromHdf5(bytes);
      if (!hdf5.ok()) return InvalidArgument(uri + " " + hdf5.status().message());
      state = std::move(hdf5).value();
    } else if (!state.ParseFromString(bytes)) {
      return InvalidArgument(uri + " is not a .solverstate");
    }
    // The weights: -weights when given with -snapshot (CaffeOnSpark's resume), else beside
    // the state, else where the state says (Caffe's learned_net).
    if (state.has_learned_net() && flags_.weights.empty()) {
      Status status = Status::Ok();
      for (const auto& model : LearnedNetCandidates(uri, state.learned_net())) {
        auto weights = ReadModel(model);
        status = weights.status();
        if (!weights.ok()) continue;
        RETURN_IF_ERROR(nets_[0]->LoadProto(*weights).status());
        break;
      }
      RETURN_IF_ERROR(status.WithContext(uri + ": its weights (learned_net " + state.learned_net() + ")"));
    }
    torch::NoGradGuard no_grad;
    RETURN_IF_ERROR(ReadHistories(state, ParamBlobsOf(nets_[0]->layout()), nets_[0]->layout().total,
                                  Histories(solver_state_), uri));
    const auto& pos = state.shoal_position();
    if (!state.has_shoal_position()) {
      Report("note: " + uri + " holds no data position (a snapshot of Caffe's): the data is read from iteration " +
             std::to_string(state.iter()) + "'s place in this run's order");
    } else if (pos.workers() * pos.devices() != layout_.replicas || pos.batch_size() != layout_.batch) {
      Report("warning: the snapshot was taken with " + std::to_string(pos.workers()) + " workers x " +
             std::to_string(pos.devices()) + " devices, batch " + std::to_string(pos.batch_size()) +
             "; this run's data order differs from the one it would have followed");
    }
    Report("Resuming from " + uri + " at iteration " + std::to_string(state.iter()));
    return static_cast<int64_t>(state.iter());
  }

  // Caffe's display at iteration `iter`, before its update (Solver::Step, then
  // SGDSolver::ApplyUpdate's rate), the outputs averaged over every replica of every
  // worker; then Shoal's reporter lines, which the web UI charts.
  Status Display(int64_t iter, double rate, float loss, std::vector<std::vector<NetOutput>>& outputs, DisplayClock& clock,
                 double images_per_s) {
    std::vector<float> values;
    for (const auto& replica : outputs) {
      size_t at = 0;
      for (const auto& out : replica) {
        if (values.size() < at + out.values.size()) values.resize(at + out.values.size(), 0.0f);
        for (float v : out.values) values[at++] += v;
      }
    }
    RETURN_IF_ERROR(SumAcrossWorkers(cluster_, values.data(), values.size()));
    size_t at = 0;
    for (auto& out : outputs[0]) {
      for (float& v : out.values) v = values[at++] / static_cast<float>(layout_.replicas);
    }
    const auto now = Clock::now();
    const double lapse = std::chrono::duration<double>(now - clock.at).count();
    const double per_s = static_cast<double>(iter - clock.iter) / (lapse > 0 ? lapse : 1);
    clock = {now, iter};
    if (Leader()) {
      auto lines = TrainDisplayLines(iter, per_s, lapse, solver_.display(), loss, outputs[0]);
      Log(kLogIteration, lines[0]);
      for (size_t i = 1; i < lines.size(); ++i) Log(kLogTrainOutput, lines[i]);
      Log(kLogRate, "Iteration " + std::to_string(iter) + ", lr = " + CaffeNumber(rate));
      char line[256];
      std::snprintf(line, sizeof(line), "reporter metric: loss=%.6g lr=%.6g images_per_s=%.1f step=%lld", loss, rate,
                    images_per_s, static_cast<long long>(iter));
      Report(line);
    }
    // Every worker: a job's progress is its tasks' average.
    char progress[64];
    std::snprintf(progress, sizeof(progress), "reporter progress:%.4f", static_cast<double>(iter) / solver_.max_iter());
    Report(progress);
    return Status::Ok();
  }

  // The bucketed reduction of replica 0's gradient buffer, fed by its net's gradient hooks.
  std::unique_ptr<GradientBuckets> OverlapReduction(int64_t total) {
    std::vector<BlobRange> ranges;
    std::vector<int> range_of_blob(nets_[0]->layout().blobs.size(), -1);
    for (size_t i = 0; i < range_of_blob.size(); ++i) {
      const BlobInfo& b = nets_[0]->layout().blobs[i];
      if (b.owner >= 0) continue;
      range_of_blob[i] = static_cast<int>(ranges.size());
      ranges.push_back(BlobRange{b.offset, b.numel, b.learnable});
    }
    auto buckets = std::make_unique<GradientBuckets>(
        grads_[0].data_ptr<float>(), total + kExtraSlots, ranges, kBucketFloats,
        [this](float* data, size_t n) { return SumAcrossWorkers(cluster_, data, n); });
    nets_[0]->OnGradientReady([reducer = buckets.get(), range_of_blob](int blob) { reducer->Ready(range_of_blob[blob]); });
    return buckets;
  }

  Status Train() {
    const auto& place = cluster_.place();
    const int D = flags_.devices;
    // The TRAIN data layer: count, lay out, load this worker's partition.
    ASSIGN_OR_RETURN(feed_, FeedOf(train_def_, "TRAIN"));
    ASSIGN_OR_RETURN(int64_t records, CountRecords(feed_.spec));
    ASSIGN_OR_RETURN(layout_, MakeTrainLayout(records, place.size, D, feed_.batch));
    ASSIGN_OR_RETURN(auto shapes, InputShapes(feed_));
    RETURN_IF_ERROR(LoadFeed(feed_, layout_.WorkerBegin(place.rank), layout_.WorkerEnd(place.rank)));
    for (int d = 0; d < D; ++d) {
      ASSIGN_OR_RETURN(auto net, Net::Create(train_def_, caffe::TRAIN, shapes));
      nets_.push_back(std::move(net));
    }
    const int64_t total = nets_[0]->layout().total;
    for (int d = 0; d < D; ++d) {
      values_.push_back(torch::zeros({total}));
      grads_.push_back(torch::zeros({total + kExtraSlots}));  // + the replica's loss and the stop flag
      nets_[d]->Bind(values_[d], grads_[d].narrow(0, 0, total));
    }
    solver_state_ = MakeSolverState(nets_[0]->layout(), solver_.type());
    nets_[0]->Fill(seed_);
    if (!flags_.weights.empty()) {
      ASSIGN_OR_RETURN(caffe::NetParameter weights, ReadModel(flags_.weights));
      ASSIGN_OR_RETURN(int copied, nets_[0]->LoadProto(weights));
      Report("Initialised " + std::to_string(copied) + " blobs from " + flags_.weights);
    }
    int64_t iter = 0;
    // -snapshot (every worker reads it), else the leader's newest checkpoint in the folder
    // Shoal restored (a retried or preempted job's).
    std::string resume = flags_.snapshot.empty() && Leader() ? managed_.NewestSnapshot() : flags_.snapshot;
    if (!resume.empty()) {
      ASSIGN_OR_RETURN(iter, Restore(resume));
    }
    // Every worker starts from rank 0's iteration, weights and history.
    if (cluster_.comm() != nullptr) {
      RETURN_IF_ERROR(collective::Broadcast(*cluster_.comm(), &iter, 1, collective::DataType::kInt64, 0));
      for (torch::Tensor* t : {&values_[0], &solver_state_.history, &solver_state_.history2}) {
        if (!t->defined()) continue;
        RETURN_IF_ERROR(collective::Broadcast(*cluster_.comm(), t->data_ptr<float>(), static_cast<size_t>(t->numel()),
                                              collective::DataType::kFloat32, 0));
      }
    }
    {
      torch::NoGradGuard no_grad;
      for (int d = 1; d < D; ++d) values_[d].copy_(values_[0]);
    }
    // One replica per worker among several: its gradients are summed across workers in
    // buckets while its backward pass runs. Several replicas per worker are summed here
    // first, after their backward passes, then across workers in one go.
    std::unique_ptr<GradientBuckets> overlap;
    if (D == 1 && cluster_.comm() != nullptr) overlap = OverlapReduction(total);
    if (Leader()) {
      Report("shoal train: " + std::to_string(place.size) + " worker(s) x " + std::to_string(D) + " device(s), batch " +
             std::to_string(layout_.batch) + " per replica (" + std::to_string(layout_.batch * layout_.replicas) +
             " per iteration), " + std::to_string(layout_.steps_per_epoch) + " iterations per epoch, " +
             std::to_string(total) + " parameters, " + std::to_string(compute_threads_) + " compute thread(s) per solver" +
             (overlap ? ", gradients summed across workers in " + std::to_string(overlap->bucket_count()) +
                            " bucket(s) as the backward pass produces them"
                      : ""));
    }
    ReplicaThreads threads(D, compute_threads_);
    std::vector<Batch> batches(D);
    std::vector<Status> errors(D);
    const int64_t max_iter = solver_.max_iter();
    const int display = solver_.display();
    const int check_every = flags_.check_every > 0 ? flags_.check_every : (display > 0 ? display : 100);
    const float inv_replicas = 1.0f / static_cast<float>(layout_.replicas);
    auto start = Clock::now();
    double cpu_start = CpuSeconds();
    int64_t first_iter = iter;
    SmoothedLoss smoothed(solver_.average_loss());
    std::vector<std::vector<NetOutput>> outputs(D);  // each replica's TRAIN net outputs, when displayed
    DisplayClock display_clock{Clock::now(), iter};
    auto stop_on_signals = std::make_unique<StopOnSignals>();  // SIGINT, SIGTERM: snapshot, then end
    int64_t last_snapshot = -1;
    if (Leader()) {
      Log(kLogSolving, "Solving " + train_def_.name());
      Log(kLogPolicy, "Learning Rate Policy: " + (solver_.has_lr_policy() ? solver_.lr_policy() : std::string("fixed")));
    }
    while (iter < max_iter) {
      if (solver_.test_interval() > 0 && solver_.test_iter_size() > 0 && iter % solver_.test_interval() == 0 &&
          (iter > 0 || solver_.test_initialization())) {
        auto test_start = Clock::now();
        double test_cpu = CpuSeconds();
        RETURN_IF_ERROR(TestDuringTraining(iter));
        start += Clock::now() - test_start;  // images/s counts training alone
        cpu_start += CpuSeconds() - test_cpu;
      }
      const double rate = LearningRate(solver_, iter);
      const bool display_now = display > 0 && iter % display == 0;
      threads.Run([&](int d) {
        const int replica = place.rank * D + d;
        grads_[d].zero_();
        if (overlap) overlap->Start();
        auto inputs = MakeInputs(feed_, true, Mix(seed_ ^ Mix(static_cast<uint64_t>(iter))),
                                 layout_.BatchStart(replica, iter), layout_.batch, batches[d]);
        auto blobs = nets_[d]->Forward(inputs, true, Mix(seed_ + 0x51ed27 * static_cast<uint64_t>(iter) + replica));
        if (!blobs.ok()) {
          errors[d] = blobs.status();
          return;
        }
        torch::Tensor loss = nets_[d]->Loss(*blobs);
        if (!loss.defined()) {
          errors[d] = InvalidArgument("the TRAIN net has no loss layer (SoftmaxWithLoss)");
          return;
        }
        loss.backward();
        nets_[d]->CommitState();
        if (display_now) outputs[d] = OutputsOf(*nets_[d], *blobs);
        torch::NoGradGuard no_grad;
        grads_[d][total] = loss.detach();
        if (d == 0) grads_[d][total + 1] = StopVote();  // summed: every worker learns it
        for (const auto& b : nets_[d]->layout().blobs) {
          if (!b.learnable) grads_[d].narrow(0, b.offset, b.numel).copy_(values_[d].narrow(0, b.offset, b.numel));
        }
      });
      for (auto& e : errors) RETURN_IF_ERROR(e);
      torch::NoGradGuard no_grad;
      torch::Tensor sum = grads_[0];
      for (int d = 1; d < D; ++d) sum.add_(grads_[d]);
      RETURN_IF_ERROR(overlap ? overlap->Finish()
                              : SumAcrossWorkers(cluster_, sum.data_ptr<float>(), static_cast<size_t>(sum.numel())));
      sum.mul_(inv_replicas);
      // Caffe's UpdateSmoothedLoss and display come before the update, labelled with the
      // iteration whose forward pass and rate they show.
      smoothed.Add(sum[total].item<float>());
      if (display_now) {
        double secs = std::chrono::duration<double>(Clock::now() - start).count();
        double ips = static_cast<double>((iter - first_iter) * layout_.batch * layout_.replicas) / std::max(secs, 1e-9);
        RETURN_IF_ERROR(Display(iter, rate, smoothed.value(), outputs, display_clock, ips));
      }
      ApplyUpdate(solver_, solver_state_, values_[0], sum.narrow(0, 0, total), rate, iter);
      for (int d = 1; d < D; ++d) values_[d].copy_(values_[0]);
      const int stop_signal = SignalOfVotes(sum[total + 1].item<float>() * static_cast<float>(layout_.replicas));
      ++iter;
      if (iter % check_every == 0 || iter == max_iter) RETURN_IF_ERROR(CheckReplicas(iter));
      if (solver_.snapshot() > 0 && iter % solver_.snapshot() == 0) {
        RETURN_IF_ERROR(Snapshot(iter));
        last_snapshot = iter;
      }
      if (stop_signal) {
        // SIGINT or SIGTERM reached a worker (Ctrl-C, a preemption): every worker stops at
        // this iteration, after its snapshot (Caffe's default, sigint_effect stop), and
        // ends as signalled, also one whose own signal has not arrived yet.
        const bool own = StopRequested();
        AdoptStopSignal(stop_signal);
        if (last_snapshot != iter) RETURN_IF_ERROR(Snapshot(iter));
        if (Leader()) Log(kLogStoppedEarly, "Optimization stopped early.");
        return Aborted("stopped by " + StopSignalName() + " at iteration " + std::to_string(iter) +
                       (own ? "" : " (sent to another worker)") + ", after its snapshot");
      }
    }
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    double cpu = CpuSeconds() - cpu_start;
    stop_on_signals.reset();
    Report("reporter progress:1.0000");
    if (solver_.snapshot_after_train() && last_snapshot != iter) RETURN_IF_ERROR(Snapshot(iter));
    if (solver_.test_interval() > 0 && solver_.test_iter_size() > 0 && iter % solver_.test_interval() == 0) {
      RETURN_IF_ERROR(TestDuringTraining(iter));
    }
    if (Leader()) {
      Log(kLogDone, "Optimization Done.");
      char line[256];
      double images = static_cast<double>((iter - first_iter) * layout_.batch * layout_.replicas);
      std::snprintf(line, sizeof(line),
                    "Optimization done: %lld iterations in %.2f s, %.1f images/s (this worker: %.2f CPU s, %.1f images per CPU s)",
                    static_cast<long long>(iter - first_iter), secs, images / std::max(secs, 1e-9), cpu,
                    images / layout_.replicas * flags_.devices / std::max(cpu, 1e-9));
      Report(line);
      RETURN_IF_ERROR(WriteFileAtomic(flags_.model, Serialize(nets_[0]->ToProto())));
      Report("Model written to " + flags_.model);
    }
    return Status::Ok();
  }

  // Every replica of this worker holds replica 0's bytes, and every worker the same hash.
  Status CheckReplicas(int64_t iter) {
    const size_t bytes = static_cast<size_t>(values_[0].numel()) * sizeof(float);
    for (size_t d = 1; d < values_.size(); ++d) {
      if (std::memcmp(values_[0].data_ptr<float>(), values_[d].data_ptr<float>(), bytes) != 0) {
        return Internal("replica " + std::to_string(d) + " differs from replica 0 after iteration " + std::to_string(iter));
      }
    }
    if (cluster_.comm() == nullptr) return Status::Ok();
    uint64_t h = HashOf(values_[0]);
    int64_t mm[2] = {static_cast<int64_t>(h), static_cast<int64_t>(~h)};
    RETURN_IF_ERROR(collective::Allreduce(*cluster_.comm(), mm, 2, collective::DataType::kInt64, collective::ReduceOp::kMin));
    if (mm[0] != static_cast<int64_t>(h) || mm[1] != static_cast<int64_t>(~h)) {
      return Internal("the workers' weights differ after iteration " + std::to_string(iter));
    }
    return Status::Ok();
  }

  // -test and -features: the first test net, every test image once.
  Status Evaluate() {
    RETURN_IF_ERROR(PrepareTest(0));
    TestNet& test = tests_[0];
    if (!nets_.empty()) {
      CopyShared(nets_[0]->layout(), values_[0], test.net->layout(), test.values);
    } else {
      const std::string& uri = flags_.model.empty() ? flags_.weights : flags_.model;
      ASSIGN_OR_RETURN(caffe::NetParameter model, ReadModel(uri));
      ASSIGN_OR_RETURN(int copied, test.net->LoadProto(model));
      if (copied == 0) return InvalidArgument(uri + " has no blobs for the layers of this net (is it a model of another net?)");
    }
    Scalars s;
    Batch batch;
    std::string rows;
    Status feature_error = Status::Ok();
    const bool json = flags_.output_format == OutputFormat::kJson;
    std::function<void(int64_t, int64_t, const std::map<std::string, torch::Tensor>&)> each;
    if (!flags_.features.empty()) {
      for (const auto& name : flags_.features) {
        if (!HasBlob(name)) return InvalidArgument("-features: the TEST net has no blob '" + name + "'");
      }
      if (!flags_.label.empty() && !HasBlob(flags_.label)) return InvalidArgument("-label: the TEST net has no blob '" + flags_.label + "'");
      if (!json) {
        rows += "SampleID";
        for (const auto& f : flags_.features) rows += "," + f;
        if (!flags_.label.empty()) rows += "," + flags_.label;
        rows += "\n";
      }
      // A blob's rows, one per sample of the batch. A scalar blob (the batch's accuracy or
      // loss) is written on each of its samples' rows, as CaffeOnSpark writes it; a blob of
      // any other size that is not a whole number of values per sample cannot be written.
      auto rows_of = [&](const std::string& name, const torch::Tensor& blob, int64_t n) -> torch::Tensor {
        torch::Tensor t = blob.detach();
        if (t.numel() == 1) return t.reshape({1, 1}).expand({n, 1}).contiguous();
        if (t.numel() % n == 0) return t.reshape({n, -1}).contiguous();
        if (feature_error.ok()) {
          feature_error = InvalidArgument("-features: blob '" + name + "' holds " + std::to_string(t.numel()) +
                                          " values for a batch of " + std::to_string(n) +
                                          " samples, not a whole number per sample; pick a blob with one row per sample "
                                          "(e.g. an InnerProduct's top) or a scalar (accuracy, loss)");
        }
        return torch::Tensor();
      };
      each = [&](int64_t first, int64_t n, const std::map<std::string, torch::Tensor>& blobs) {
        std::vector<torch::Tensor> feats;
        for (const auto& f : flags_.features) feats.push_back(rows_of(f, blobs.at(f), n));
        torch::Tensor label = flags_.label.empty() ? torch::Tensor() : rows_of(flags_.label, blobs.at(flags_.label), n);
        if (!feature_error.ok()) return;
        char buf[32];
        for (int64_t i = 0; i < n; ++i) {
          rows += json ? "{\"SampleID\":\"" + std::to_string(first + i) + "\"" : std::to_string(first + i);
          auto values = [&](const torch::Tensor& t, bool bracket) {
            const float* p = t.data_ptr<float>() + i * t.size(1);
            std::string out = bracket ? "[" : "";
            for (int64_t j = 0; j < t.size(1); ++j) {
              std::snprintf(buf, sizeof(buf), "%.7g", p[j]);
              out += (j ? (json ? "," : " ") : "") + std::string(buf);
            }
            return out + (bracket ? "]" : "");
          };
          for (size_t k = 0; k < feats.size(); ++k) {
            rows += json ? ",\"" + flags_.features[k] + "\":" + values(feats[k], true) : "," + values(feats[k], false);
          }
          if (label.defined()) rows += json ? ",\"" + flags_.label + "\":" + values(label, label.size(1) > 1) : "," + values(label, false);
          rows += json ? "}\n" : "\n";
        }
      };
    }
    RETURN_IF_ERROR(EvaluateBatches(*test.net, test.feed, test.range.begin, test.range.end - test.range.begin, s, batch, each));
    RETURN_IF_ERROR(feature_error);
    const auto& place = cluster_.place();
    if (!flags_.features.empty()) {
      char name[64];
      std::snprintf(name, sizeof(name), "part-%05d.%s", place.rank, json ? "json" : "csv");
      RETURN_IF_ERROR(WriteFileAtomic(UriJoin(flags_.output, name), rows));
      Report("Features of " + std::to_string(test.range.end - test.range.begin) + " images written to " + UriJoin(flags_.output, name));
    }
    RETURN_IF_ERROR(Reduce(cluster_, s));
    if (Leader()) {
      Report("Test on " + std::to_string(static_cast<int64_t>(s.images)) + " images: " + FormatScalars(s));
      if (flags_.test && !flags_.output.empty()) {
        std::string out = "{\"images\":" + std::to_string(static_cast<int64_t>(s.images));
        for (size_t i = 0; i < s.names.size(); ++i) {
          char buf[64];
          std::snprintf(buf, sizeof(buf), "%.7g", s.sums[i] / std::max(1.0, s.images));
          out += ",\"" + s.names[i] + "\":" + buf;
        }
        RETURN_IF_ERROR(WriteFileAtomic(flags_.output, out + "}\n"));
      }
    }
    return Status::Ok();
  }

  bool HasBlob(const std::string& name) const {
    for (const auto& l : tests_[0].def.layer()) {
      for (const auto& t : l.top()) {
        if (t == name) return true;
      }
    }
    return false;
  }

  const TrainFlags& flags_;
  Cluster& cluster_;
  caffe::SolverParameter solver_;
  caffe::NetParameter train_def_;
  int compute_threads_ = 1;
  uint64_t seed_ = 0;
  Feed feed_;
  TrainLayout layout_;
  std::vector<std::unique_ptr<Net>> nets_;
  std::vector<torch::Tensor> values_, grads_;
  SolverState solver_state_;
  // The test nets (one per test_iter, at least one), built when first needed.
  struct TestNet {
    caffe::NetParameter def;
    std::unique_ptr<Net> net;
    torch::Tensor values;
    Feed feed;
    Range range;
  };
  std::vector<TestNet> tests_;
  ManagedCheckpoint managed_;  // the checkpoint folder Shoal manages, if the task has one
  // Each replica's flat gradient buffer holds, after the parameters' gradients, its loss and
  // the stop flag (SIGTERM seen), summed across workers with the gradients.
  static constexpr int kExtraSlots = 2;
  // Gradient buckets of at least 1 MiB (256 Ki floats): PyTorch DDP's first bucket size.
  static constexpr int64_t kBucketFloats = 256 * 1024;
};

}  // namespace

Status RunTrainer(const TrainFlags& flags, Cluster& cluster) {
  Run run(flags, cluster);
  return run.Go();
}

}  // namespace shoal::train
