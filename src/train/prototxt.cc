#include "train/prototxt.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "train/solver_type.h"
#include "train/uri.h"

namespace shoal::train {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::TextFormat;

class Collector : public google::protobuf::io::ErrorCollector {
 public:
  explicit Collector(std::string filename) : filename_(std::move(filename)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = filename_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {}
  const std::string& first() const { return first_; }

 private:
  std::string filename_;
  std::string first_;
};

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Join(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Locates fields for error messages: "<file>:<line>".
class Where {
 public:
  Where(std::string filename, const TextFormat::ParseInfoTree* tree) : filename_(std::move(filename)), tree_(tree) {}
  // The line of `field` (index for repeated fields, -1 otherwise) in this tree.
  std::string At(const FieldDescriptor* field, int index = -1) const {
    int line = 0;
    if (tree_ != nullptr && field != nullptr) {
      auto loc = tree_->GetLocation(field, index);
      if (loc.line >= 0) line = loc.line + 1;
    }
    return filename_ + ":" + std::to_string(line);
  }
  Where Nested(const FieldDescriptor* field, int index = -1) const {
    return Where(filename_, tree_ == nullptr ? nullptr : tree_->GetTreeForNested(field, index));
  }

 private:
  std::string filename_;
  const TextFormat::ParseInfoTree* tree_;
};

Status Refuse(const Where& where, const Message& m, const std::string& field, int index, const std::string& what) {
  return InvalidArgument(where.At(m.GetDescriptor()->FindFieldByName(field), index) + ": " + what);
}

// Which *_param blocks each layer type takes.
const std::map<std::string, std::set<std::string>>& ParamsOf() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"Data", {"data_param", "transform_param"}},
      {"MemoryData", {"memory_data_param", "transform_param"}},
      {"Convolution", {"convolution_param"}},
      {"Pooling", {"pooling_param"}},
      {"InnerProduct", {"inner_product_param"}},
      {"ReLU", {"relu_param"}},
      {"Sigmoid", {"sigmoid_param"}},
      {"TanH", {"tanh_param"}},
      {"Dropout", {"dropout_param"}},
      {"BatchNorm", {"batch_norm_param"}},
      {"Scale", {"scale_param"}},
      {"Flatten", {"flatten_param"}},
      {"Concat", {"concat_param"}},
      {"Softmax", {"softmax_param"}},
      {"SoftmaxWithLoss", {"softmax_param", "loss_param"}},
      {"Accuracy", {"accuracy_param"}},
  };
  return table;
}

const std::vector<std::string>& FillerTypes() {
  static const std::vector<std::string> types = {"constant", "gaussian", "xavier", "msra", "uniform"};
  return types;
}

Status CheckFiller(const Where& where, const Message& parent, const std::string& field,
                   const caffe::FillerParameter& filler) {
  const FieldDescriptor* f = parent.GetDescriptor()->FindFieldByName(field);
  if (!parent.GetReflection()->HasField(parent, f)) return Status::Ok();
  if (!Contains(FillerTypes(), filler.type())) {
    return InvalidArgument(where.At(f) + ": " + field + " type '" + filler.type() +
                           "' is not supported (supported: " + Join(FillerTypes()) + ")");
  }
  if (filler.sparse() != -1) {
    return InvalidArgument(where.At(f) + ": " + field + " sparse is not supported; remove it");
  }
  return Status::Ok();
}

Status CheckLayer(const caffe::LayerParameter& layer, const Where& at_layer, const Where& in_layer) {
  const std::string label = "layer '" + layer.name() + "'";
  if (!layer.has_type()) return InvalidArgument(at_layer.At(nullptr) + ": " + label + " has no type");
  auto params = ParamsOf().find(layer.type());
  if (params == ParamsOf().end()) {
    return Refuse(in_layer, layer, "type", -1,
                  label + " has type '" + layer.type() + "', which shoal train does not support (supported: " +
                      Join(SupportedLayerTypes()) + ")");
  }
  // A *_param block of another type would be ignored: refuse it instead.
  const Reflection* r = layer.GetReflection();
  std::vector<const FieldDescriptor*> set;
  r->ListFields(layer, &set);
  for (const FieldDescriptor* f : set) {
    const std::string& name = f->name();
    if (name.size() > 6 && name.compare(name.size() - 6, 6, "_param") == 0 && !params->second.count(name)) {
      return InvalidArgument(in_layer.At(f) + ": " + label + " (" + layer.type() + ") does not take " + name);
    }
  }
  if (layer.blobs_size() > 0) return Refuse(in_layer, layer, "blobs", 0, label + ": blobs belong in a .caffemodel file, not in a net definition");
  if (layer.include_size() > 0 && layer.exclude_size() > 0) {
    return Refuse(in_layer, layer, "exclude", 0, label + " has both include and exclude rules; use one");
  }
  for (int i = 0; i < layer.include_size(); ++i) {
    if (!layer.include(i).has_phase()) return Refuse(in_layer, layer, "include", i, label + ": include needs a phase (TRAIN or TEST)");
  }
  for (int i = 0; i < layer.exclude_size(); ++i) {
    if (!layer.exclude(i).has_phase()) return Refuse(in_layer, layer, "exclude", i, label + ": exclude needs a phase (TRAIN or TEST)");
  }
  if (layer.loss_weight_size() > 0 && layer.type() != "SoftmaxWithLoss") {
    return Refuse(in_layer, layer, "loss_weight", 0, label + ": loss_weight is only supported on SoftmaxWithLoss layers");
  }
  const std::string& type = layer.type();
  auto nested = [&](const char* field) { return in_layer.Nested(layer.GetDescriptor()->FindFieldByName(field)); };
  if (type == "Data" || type == "MemoryData") {
    int batch = type == "Data" ? layer.data_param().batch_size() : layer.memory_data_param().batch_size();
    std::string source = type == "Data" ? layer.data_param().source() : layer.memory_data_param().source();
    const char* block = type == "Data" ? "data_param" : "memory_data_param";
    if (batch <= 0) return Refuse(in_layer, layer, "type", -1, label + ": " + block + " needs a batch_size > 0");
    if (source.empty()) return Refuse(in_layer, layer, "type", -1, label + ": " + block + " needs a source (IDX, LMDB or CSV)");
    if (type == "Data" && layer.data_param().has_backend() && layer.data_param().backend() == caffe::DataParameter::LEVELDB) {
      Where w = nested("data_param");
      return Refuse(w, layer.data_param(), "backend", -1, label + ": backend LEVELDB is not supported; use LMDB, IDX or CSV");
    }
    if (layer.top_size() < 1 || layer.top_size() > 2) return Refuse(in_layer, layer, "type", -1, label + " needs tops data and (optionally) label");
  } else if (type == "Convolution") {
    const auto& p = layer.convolution_param();
    Where w = nested("convolution_param");
    if (p.num_output() == 0) return Refuse(in_layer, layer, "convolution_param", -1, label + ": convolution_param needs num_output");
    if (p.kernel_size_size() == 0 && !(p.has_kernel_h() && p.has_kernel_w())) {
      return Refuse(in_layer, layer, "convolution_param", -1, label + ": convolution_param needs kernel_size (or kernel_h and kernel_w)");
    }
    if (p.kernel_size_size() > 2 || p.pad_size() > 2 || p.stride_size() > 2 || p.dilation_size() > 2) {
      return Refuse(in_layer, layer, "convolution_param", -1, label + ": only 2-D convolutions are supported");
    }
    RETURN_IF_ERROR(CheckFiller(w, p, "weight_filler", p.weight_filler()));
    RETURN_IF_ERROR(CheckFiller(w, p, "bias_filler", p.bias_filler()));
  } else if (type == "InnerProduct") {
    const auto& p = layer.inner_product_param();
    Where w = nested("inner_product_param");
    if (p.num_output() == 0) return Refuse(in_layer, layer, "inner_product_param", -1, label + ": inner_product_param needs num_output");
    RETURN_IF_ERROR(CheckFiller(w, p, "weight_filler", p.weight_filler()));
    RETURN_IF_ERROR(CheckFiller(w, p, "bias_filler", p.bias_filler()));
  } else if (type == "Pooling") {
    const auto& p = layer.pooling_param();
    Where w = nested("pooling_param");
    if (p.pool() == caffe::PoolingParameter::STOCHASTIC) return Refuse(w, p, "pool", -1, label + ": STOCHASTIC pooling is not supported (use MAX or AVE)");
    if (!p.global_pooling() && !p.has_kernel_size() && !(p.has_kernel_h() && p.has_kernel_w())) {
      return Refuse(in_layer, layer, "pooling_param", -1, label + ": pooling_param needs kernel_size or global_pooling");
    }
  } else if (type == "Scale") {
    const auto& p = layer.scale_param();
    Where w = nested("scale_param");
    if (p.axis() != 1) return Refuse(w, p, "axis", -1, label + ": only axis 1 (channels) is supported");
    if (p.num_axes() != 1) return Refuse(w, p, "num_axes", -1, label + ": only num_axes 1 is supported");
    if (layer.bottom_size() != 1) return Refuse(in_layer, layer, "bottom", 1, label + ": Scale takes one bottom (a learned scale)");
    RETURN_IF_ERROR(CheckFiller(w, p, "filler", p.filler()));
    RETURN_IF_ERROR(CheckFiller(w, p, "bias_filler", p.bias_filler()));
  } else if (type == "SoftmaxWithLoss" || type == "Accuracy") {
    if (layer.bottom_size() != 2) return Refuse(in_layer, layer, "type", -1, label + " needs two bottoms (scores and label)");
  } else if (type == "Concat") {
    if (layer.bottom_size() < 1) return Refuse(in_layer, layer, "type", -1, label + " needs at least one bottom");
  }
  if (type != "Data" && type != "MemoryData" && type != "Concat" && type != "SoftmaxWithLoss" && type != "Accuracy" &&
      layer.bottom_size() != 1) {
    return Refuse(in_layer, layer, "type", -1, label + " (" + type + ") needs exactly one bottom");
  }
  if (type != "Data" && type != "MemoryData" && layer.top_size() != 1) {
    return Refuse(in_layer, layer, "type", -1, label + " (" + type + ") needs exactly one top");
  }
  return Status::Ok();
}

Result<std::string> ReadText(const std::string& path) {
  return ReadFileBytes(path);
}

template <typename M>
Result<M> ParseText(const std::string& text, const std::string& filename, TextFormat::ParseInfoTree* tree) {
  M message;
  Collector errors(filename);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree);
  if (!parser.ParseFromString(text, &message)) {
    return InvalidArgument(errors.first().empty() ? filename + ": cannot parse" : errors.first());
  }
  return message;
}

}  // namespace

const std::vector<std::string>& SupportedLayerTypes() {
  static const std::vector<std::string> types = {
      "Data", "MemoryData", "Convolution", "Pooling", "InnerProduct", "ReLU", "Sigmoid", "TanH",
      "Dropout", "BatchNorm", "Scale", "Flatten", "Concat", "Softmax", "SoftmaxWithLoss", "Accuracy"};
  return types;
}

const std::vector<std::string>& SupportedSolverTypes() {
  static const std::vector<std::string> types = {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"};
  return types;
}

const std::vector<std::string>& SupportedLrPolicies() {
  static const std::vector<std::string> policies = {"fixed", "step", "multistep", "inv", "poly", "exp"};
  return policies;
}

Result<caffe::NetParameter> ParseNetText(const std::string& text, const std::string& filename) {
  TextFormat::ParseInfoTree tree;
  ASSIGN_OR_RETURN(caffe::NetParameter net, ParseText<caffe::NetParameter>(text, filename, &tree));
  Where where(filename, &tree);
  const FieldDescriptor* layer_field = net.GetDescriptor()->FindFieldByName("layer");
  if (net.layer_size() == 0) return InvalidArgument(filename + ": the net has no layers");
  std::set<std::string> names;
  for (int i = 0; i < net.layer_size(); ++i) {
    const auto& layer = net.layer(i);
    Where at_layer(filename, nullptr);
    std::string line = where.At(layer_field, i);
    Where in_layer = where.Nested(layer_field, i);
    Status status = CheckLayer(layer, at_layer, in_layer);
    if (!status.ok()) {
      // Messages that could not be pinned to a field get the layer's own line.
      std::string m = status.message();
      if (m.rfind(filename + ":0:", 0) == 0) m = line + m.substr(filename.size() + 2);
      return InvalidArgument(m);
    }
    if (layer.name().empty()) return InvalidArgument(line + ": a layer of type " + layer.type() + " has no name");
  }
  return net;
}

Result<caffe::SolverParameter> ParseSolverText(const std::string& text, const std::string& filename) {
  TextFormat::ParseInfoTree tree;
  ASSIGN_OR_RETURN(caffe::SolverParameter solver, ParseText<caffe::SolverParameter>(text, filename, &tree));
  Where where(filename, &tree);
  if (auto problem = UpgradeSolverType(solver)) return Refuse(where, solver, problem->field, -1, problem->message);
  if (!Contains(SupportedSolverTypes(), solver.type())) {
    return Refuse(where, solver, "type", -1,
                  "solver type '" + solver.type() + "' is not supported (supported: " + Join(SupportedSolverTypes()) + ")");
  }
  std::string policy = solver.has_lr_policy() ? solver.lr_policy() : "fixed";
  if (!Contains(SupportedLrPolicies(), policy)) {
    return Refuse(where, solver, "lr_policy", -1,
                  "lr_policy '" + policy + "' is not supported (supported: " + Join(SupportedLrPolicies()) + ")");
  }
  if (policy == "step" && solver.stepsize() <= 0) return Refuse(where, solver, "lr_policy", -1, "lr_policy step needs stepsize > 0");
  if (policy == "multistep" && solver.stepvalue_size() == 0) return Refuse(where, solver, "lr_policy", -1, "lr_policy multistep needs stepvalue");
  if (solver.regularization_type() != "L2") {
    return Refuse(where, solver, "regularization_type", -1, "regularization_type '" + solver.regularization_type() + "' is not supported (only L2)");
  }
  if (solver.snapshot_format() != caffe::SolverParameter::BINARYPROTO) {
    return Refuse(where, solver, "snapshot_format", -1, "snapshot_format HDF5 is not supported (use BINARYPROTO)");
  }
  if (solver.test_iter_size() > 1) return Refuse(where, solver, "test_iter", 1, "only one test net is supported: give one test_iter");
  if (solver.has_net_param()) return Refuse(where, solver, "net_param", -1, "net_param (an inline net) is not supported: name a net file with `net`");
  if (!solver.has_net()) return InvalidArgument(filename + ":1: the solver names no net (add net: \"net.prototxt\")");
  if (solver.max_iter() <= 0) return InvalidArgument(filename + ":1: the solver needs max_iter > 0");
  if (!solver.has_base_lr()) return InvalidArgument(filename + ":1: the solver needs base_lr");
  return solver;
}

Result<caffe::NetParameter> LoadNet(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return ParseNetText(text, path);
}

Result<caffe::SolverParameter> LoadSolver(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return ParseSolverText(text, path);
}

Result<std::string> ResolveNetPath(const caffe::SolverParameter& solver, const std::string& solver_path) {
  if (solver.net().empty()) return InvalidArgument(solver_path + ": the solver names no net");
  if (!IsLocal(solver.net())) return solver.net();
  std::string net = LocalPath(solver.net());
  if (std::filesystem::exists(net) || std::filesystem::path(net).is_absolute()) return net;
  if (!IsLocal(solver_path)) return UriJoin(UriDir(solver_path), net);
  auto beside = std::filesystem::path(LocalPath(solver_path)).parent_path() / net;
  if (std::filesystem::exists(beside)) return beside.string();
  return NotFound(solver_path + ": the net file '" + solver.net() + "' does not exist (looked in the current directory and beside the solver)");
}

caffe::NetParameter NetForPhase(const caffe::NetParameter& net, caffe::Phase phase) {
  caffe::NetParameter out;
  out.set_name(net.name());
  for (const auto& layer : net.layer()) {
    bool keep = layer.include_size() == 0;
    for (const auto& rule : layer.include()) keep = keep || rule.phase() == phase;
    for (const auto& rule : layer.exclude()) keep = keep && rule.phase() != phase;
    if (keep) *out.add_layer() = layer;
  }
  return out;
}

}  // namespace shoal::train
