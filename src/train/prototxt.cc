#include "train/prototxt.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
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

// What a layer type takes: its *_param blocks and how many bottoms and tops (-1: any).
struct LayerSpec {
  std::set<std::string> params;
  int min_bottoms = 1, max_bottoms = 1, min_tops = 1, max_tops = 1;
};

const std::map<std::string, LayerSpec>& Specs() {
  static const std::map<std::string, LayerSpec> table = {
      {"Data", {{"data_param", "transform_param"}, 0, 0, 1, 2}},
      {"MemoryData", {{"memory_data_param", "transform_param"}, 0, 0, 1, 2}},
      {"Input", {{"input_param"}, 0, 0, 1, -1}},
      {"Convolution", {{"convolution_param"}}},
      {"Deconvolution", {{"convolution_param"}}},
      {"InnerProduct", {{"inner_product_param"}}},
      {"Pooling", {{"pooling_param"}}},
      {"LRN", {{"lrn_param"}}},
      {"ReLU", {{"relu_param"}}},
      {"Sigmoid", {{"sigmoid_param"}}},
      {"TanH", {{"tanh_param"}}},
      {"AbsVal", {}},
      {"BNLL", {}},
      {"ELU", {{"elu_param"}}},
      {"Swish", {{"swish_param"}}},
      {"Threshold", {{"threshold_param"}}},
      {"Clip", {{"clip_param"}}},
      {"Power", {{"power_param"}}},
      {"Exp", {{"exp_param"}}},
      {"Log", {{"log_param"}}},
      {"PReLU", {{"prelu_param"}}},
      {"Dropout", {{"dropout_param"}}},
      {"BatchNorm", {{"batch_norm_param"}}},
      {"Scale", {{"scale_param"}}},
      {"Bias", {{"bias_param"}}},
      {"MVN", {{"mvn_param"}}},
      {"Flatten", {{"flatten_param"}}},
      {"Reshape", {{"reshape_param"}}},
      {"Concat", {{"concat_param"}, 1, -1, 1, 1}},
      {"Slice", {{"slice_param"}, 1, 1, 1, -1}},
      {"Split", {{}, 1, 1, 1, -1}},
      {"Silence", {{}, 1, -1, 0, 0}},
      {"Eltwise", {{"eltwise_param"}, 2, -1, 1, 1}},
      {"Crop", {{"crop_param"}, 2, 2, 1, 1}},
      {"Tile", {{"tile_param"}}},
      {"Reduction", {{"reduction_param"}}},
      {"ArgMax", {{"argmax_param"}}},
      {"Embed", {{"embed_param"}}},
      {"Softmax", {{"softmax_param"}}},
      {"SoftmaxWithLoss", {{"softmax_param", "loss_param"}, 2, 2, 1, 1}},
      {"SigmoidCrossEntropyLoss", {{"loss_param"}, 2, 2, 1, 1}},
      {"EuclideanLoss", {{"loss_param"}, 2, 2, 1, 1}},
      {"ContrastiveLoss", {{"contrastive_loss_param", "loss_param"}, 3, 3, 1, 1}},
      {"Accuracy", {{"accuracy_param"}, 2, 2, 1, 1}},
  };
  return table;
}

// Fields Caffe has that `shoal train` does not honour, with the reason and the fix. They
// parse (so a file is understood) and are then refused, never ignored.
struct Unsupported {
  const char* message;  // full name of the message, e.g. "shoal.caffe.DataParameter"
  const char* field;
  const char* why;
};

const std::vector<Unsupported>& UnsupportedFields() {
  static const std::vector<Unsupported> table = {
      {"shoal.caffe.LayerParameter", "propagate_down", "propagate_down is not supported: every bottom that needs a gradient gets one"},
      {"shoal.caffe.DataParameter", "rand_skip", "rand_skip is not supported: each replica already reads its own partition (docs/train.md)"},
      {"shoal.caffe.DataParameter", "scale", "data_param's scale is Caffe's deprecated form: move it to transform_param"},
      {"shoal.caffe.DataParameter", "mean_file", "data_param's mean_file is Caffe's deprecated form: move it to transform_param"},
      {"shoal.caffe.DataParameter", "crop_size", "data_param's crop_size is Caffe's deprecated form: move it to transform_param"},
      {"shoal.caffe.DataParameter", "mirror", "data_param's mirror is Caffe's deprecated form: move it to transform_param"},
      {"shoal.caffe.DataParameter", "force_encoded_color", "force_encoded_color is not supported: shoal train reads raw Datums, not encoded images"},
      {"shoal.caffe.TransformationParameter", "force_color", "force_color is not supported: shoal train reads raw Datums, not encoded images"},
      {"shoal.caffe.TransformationParameter", "force_gray", "force_gray is not supported: shoal train reads raw Datums, not encoded images"},
      {"shoal.caffe.DropoutParameter", "scale_train", "scale_train is not supported: Dropout scales in TRAIN, as Caffe's default does"},
      {"shoal.caffe.ConvolutionParameter", "axis", "only axis 1 (channels) is supported"},
      {"shoal.caffe.ScaleParameter", "axis", "only axis 1 (channels) is supported"},
      {"shoal.caffe.ScaleParameter", "num_axes", "only num_axes 1 is supported"},
      {"shoal.caffe.BiasParameter", "axis", "only axis 1 (channels) is supported"},
      {"shoal.caffe.BiasParameter", "num_axes", "only num_axes 1 is supported"},
      {"shoal.caffe.NetParameter", "debug_info", "debug_info is not supported; remove it"},
      {"shoal.caffe.NetParameter", "state", "a net file's state is not used: the solver's train_state and test_state choose the layers"},
  };
  return table;
}

// Gathers every problem of a file, each "<file>:<line>: <what>", so one run reports all.
class Problems {
 public:
  void Add(const Status& s) {
    if (!s.ok()) list_.push_back(s.message());
  }
  bool empty() const { return list_.empty(); }
  const std::vector<std::string>& list() const { return list_; }
  // One problem as it is; several behind "<file>: N problems:", each on its own line.
  Status ToStatus(const std::string& filename) const {
    std::string out;
    for (const auto& m : list_) out += (out.empty() ? "" : "\n") + m;
    if (list_.size() > 1) out = filename + ": " + std::to_string(list_.size()) + " problems:\n" + out;
    return InvalidArgument(out);
  }

 private:
  std::vector<std::string> list_;
};

// Refuses every set field of `m` (and of messages nested in it) listed as unsupported,
// or a value outside what shoal train does.
void CheckFields(const Message& m, const Where& where, Problems& out) {
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const FieldDescriptor* f : set) {
    for (const auto& u : UnsupportedFields()) {
      if (m.GetDescriptor()->full_name() != u.message || f->name() != u.field) continue;
      if (f->name() == "axis" || f->name() == "num_axes") {
        if (r->GetInt32(m, f) == 1) continue;  // the value shoal train implements
      }
      if (f->name() == "scale_train" && r->GetBool(m, f)) continue;
      out.Add(InvalidArgument(where.At(f, f->is_repeated() ? 0 : -1) + ": " + u.why));
    }
    if (f->type() != FieldDescriptor::TYPE_MESSAGE || f->message_type()->full_name() == "shoal.caffe.BlobProto") continue;
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i) CheckFields(r->GetRepeatedMessage(m, f, i), where.Nested(f, i), out);
    } else {
      CheckFields(r->GetMessage(m, f), where.Nested(f), out);
    }
  }
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
  if (filler.has_sparse() && filler.type() != "gaussian") {
    return InvalidArgument(where.At(f) + ": " + field + " sparse applies only to gaussian fillers; remove it");
  }
  return Status::Ok();
}

std::string CountText(int min, int max, const char* what) {
  if (min == max) return std::to_string(min) + " " + what + (min == 1 ? "" : "s");
  if (max < 0) return "at least " + std::to_string(min) + " " + what + (min == 1 ? "" : "s");
  return std::to_string(min) + " to " + std::to_string(max) + " " + what + "s";
}

// CaffeOnSpark's data source classes, and the backend that reads the same data here.
Status CheckSourceClass(const caffe::LayerParameter& layer, const Where& in_layer, const std::string& label) {
  if (!layer.has_source_class()) return Status::Ok();
  const std::string& cls = layer.source_class();
  if (layer.type() != "MemoryData") {
    return Refuse(in_layer, layer, "source_class", -1, label + ": source_class (CaffeOnSpark's) goes with MemoryData layers only");
  }
  if (cls == "com.yahoo.ml.caffe.LMDB") return Status::Ok();
  return Refuse(in_layer, layer, "source_class", -1,
                label + ": source_class '" + cls + "' is a CaffeOnSpark data source that shoal train does not have; "
                "use com.yahoo.ml.caffe.LMDB (an LMDB of Caffe Datums), or drop source_class and give memory_data_param a "
                "backend of LMDB, IDX or CSV");
}

void CheckLayer(const caffe::LayerParameter& layer, const Where& in_layer, Problems& out) {
  const std::string label = "layer '" + layer.name() + "'";
  if (!layer.has_type()) {
    out.Add(InvalidArgument(in_layer.At(nullptr) + ": " + label + " has no type"));
    return;
  }
  auto spec = Specs().find(layer.type());
  if (spec == Specs().end()) {
    out.Add(Refuse(in_layer, layer, "type", -1,
                   label + " has type '" + layer.type() + "', which shoal train does not support (supported: " +
                       Join(SupportedLayerTypes()) + ")"));
    return;
  }
  const std::string& type = layer.type();
  // A *_param block of another type would be ignored: refuse it instead.
  const Reflection* r = layer.GetReflection();
  std::vector<const FieldDescriptor*> set;
  r->ListFields(layer, &set);
  for (const FieldDescriptor* f : set) {
    const std::string& name = f->name();
    if (name.size() > 6 && name.compare(name.size() - 6, 6, "_param") == 0 && !spec->second.params.count(name)) {
      out.Add(InvalidArgument(in_layer.At(f) + ": " + label + " (" + type + ") does not take " + name));
    }
  }
  CheckFields(layer, in_layer, out);
  out.Add(CheckSourceClass(layer, in_layer, label));
  const LayerSpec& s = spec->second;
  if (layer.bottom_size() < s.min_bottoms || (s.max_bottoms >= 0 && layer.bottom_size() > s.max_bottoms)) {
    out.Add(Refuse(in_layer, layer, "type", -1, label + " (" + type + ") needs " + CountText(s.min_bottoms, s.max_bottoms, "bottom") +
                                                    "; it has " + std::to_string(layer.bottom_size())));
  }
  if (layer.top_size() < s.min_tops || (s.max_tops >= 0 && layer.top_size() > s.max_tops)) {
    out.Add(Refuse(in_layer, layer, "type", -1, label + " (" + type + ") needs " + CountText(s.min_tops, s.max_tops, "top") +
                                                    "; it has " + std::to_string(layer.top_size())));
  }
  if (layer.blobs_size() > 0) out.Add(Refuse(in_layer, layer, "blobs", 0, label + ": blobs belong in a .caffemodel file, not in a net definition"));
  if (layer.include_size() > 0 && layer.exclude_size() > 0) {
    out.Add(Refuse(in_layer, layer, "exclude", 0, label + " has both include and exclude rules; use one"));
  }
  if (layer.loss_weight_size() > layer.top_size()) {
    out.Add(Refuse(in_layer, layer, "loss_weight", 0, label + " has more loss_weight values than tops"));
  }
  auto nested = [&](const char* field) { return in_layer.Nested(layer.GetDescriptor()->FindFieldByName(field)); };
  if (type == "Data" || type == "MemoryData") {
    int batch = type == "Data" ? layer.data_param().batch_size() : layer.memory_data_param().batch_size();
    std::string source = type == "Data" ? layer.data_param().source() : layer.memory_data_param().source();
    const char* block = type == "Data" ? "data_param" : "memory_data_param";
    if (batch <= 0) out.Add(Refuse(in_layer, layer, "type", -1, label + ": " + block + " needs a batch_size > 0"));
    if (source.empty()) out.Add(Refuse(in_layer, layer, "type", -1, label + ": " + block + " needs a source (IDX, LMDB or CSV)"));
    if (type == "Data" && layer.data_param().has_backend() && layer.data_param().backend() == caffe::DataParameter::LEVELDB) {
      out.Add(Refuse(nested("data_param"), layer.data_param(), "backend", -1, label + ": backend LEVELDB is not supported; use LMDB, IDX or CSV"));
    }
    const auto& t = layer.transform_param();
    if (t.has_mean_file() && t.mean_value_size() > 0) {
      out.Add(Refuse(nested("transform_param"), t, "mean_file", -1, label + ": give mean_file or mean_value, not both"));
    }
  } else if (type == "Input") {
    const auto& p = layer.input_param();
    if (p.shape_size() != 1 && p.shape_size() != layer.top_size()) {
      out.Add(Refuse(in_layer, layer, "type", -1, label + ": input_param needs one shape, or one per top"));
    }
  } else if (type == "Convolution" || type == "Deconvolution") {
    const auto& p = layer.convolution_param();
    Where w = nested("convolution_param");
    if (p.num_output() == 0) out.Add(Refuse(in_layer, layer, "convolution_param", -1, label + ": convolution_param needs num_output"));
    if (p.kernel_size_size() == 0 && !(p.has_kernel_h() && p.has_kernel_w())) {
      out.Add(Refuse(in_layer, layer, "convolution_param", -1, label + ": convolution_param needs kernel_size (or kernel_h and kernel_w)"));
    }
    if (p.kernel_size_size() > 2 || p.pad_size() > 2 || p.stride_size() > 2 || p.dilation_size() > 2) {
      out.Add(Refuse(in_layer, layer, "convolution_param", -1, label + ": only 2-D convolutions are supported"));
    }
    out.Add(CheckFiller(w, p, "weight_filler", p.weight_filler()));
    out.Add(CheckFiller(w, p, "bias_filler", p.bias_filler()));
  } else if (type == "InnerProduct") {
    const auto& p = layer.inner_product_param();
    Where w = nested("inner_product_param");
    if (p.num_output() == 0) out.Add(Refuse(in_layer, layer, "inner_product_param", -1, label + ": inner_product_param needs num_output"));
    out.Add(CheckFiller(w, p, "weight_filler", p.weight_filler()));
    out.Add(CheckFiller(w, p, "bias_filler", p.bias_filler()));
  } else if (type == "Embed") {
    const auto& p = layer.embed_param();
    Where w = nested("embed_param");
    if (p.num_output() == 0 || p.input_dim() == 0) out.Add(Refuse(in_layer, layer, "embed_param", -1, label + ": embed_param needs num_output and input_dim"));
    out.Add(CheckFiller(w, p, "weight_filler", p.weight_filler()));
    out.Add(CheckFiller(w, p, "bias_filler", p.bias_filler()));
  } else if (type == "Pooling") {
    const auto& p = layer.pooling_param();
    Where w = nested("pooling_param");
    if (p.pool() == caffe::PoolingParameter::STOCHASTIC) out.Add(Refuse(w, p, "pool", -1, label + ": STOCHASTIC pooling is not supported (use MAX or AVE)"));
    if (!p.global_pooling() && !p.has_kernel_size() && !(p.has_kernel_h() && p.has_kernel_w())) {
      out.Add(Refuse(in_layer, layer, "pooling_param", -1, label + ": pooling_param needs kernel_size or global_pooling"));
    }
  } else if (type == "Clip") {
    // Caffe's ClipParameter requires both bounds.
    if (!layer.clip_param().has_min() || !layer.clip_param().has_max()) {
      out.Add(Refuse(in_layer, layer, "type", -1, label + ": clip_param needs min and max"));
    }
  } else if (type == "LRN") {
    const auto& p = layer.lrn_param();
    if (p.local_size() % 2 == 0) out.Add(Refuse(nested("lrn_param"), p, "local_size", -1, label + ": local_size must be odd, as in Caffe"));
  } else if (type == "Scale" || type == "Bias" || type == "PReLU") {
    Where w = nested(type == "Scale" ? "scale_param" : type == "Bias" ? "bias_param" : "prelu_param");
    if (type == "Scale") {
      out.Add(CheckFiller(w, layer.scale_param(), "filler", layer.scale_param().filler()));
      out.Add(CheckFiller(w, layer.scale_param(), "bias_filler", layer.scale_param().bias_filler()));
    } else if (type == "Bias") {
      out.Add(CheckFiller(w, layer.bias_param(), "filler", layer.bias_param().filler()));
    } else {
      out.Add(CheckFiller(w, layer.prelu_param(), "filler", layer.prelu_param().filler()));
    }
  }
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
      "Data", "MemoryData", "Input", "Convolution", "Deconvolution", "Pooling", "InnerProduct", "LRN",
      "ReLU", "Sigmoid", "TanH", "AbsVal", "BNLL", "ELU", "Swish", "Threshold", "Clip", "Power", "Exp", "Log",
      "PReLU", "Dropout", "BatchNorm", "Scale", "Bias", "MVN", "Flatten", "Reshape", "Concat", "Slice", "Split",
      "Silence", "Eltwise", "Crop", "Tile", "Reduction", "ArgMax", "Embed", "Softmax", "SoftmaxWithLoss",
      "SigmoidCrossEntropyLoss", "EuclideanLoss", "ContrastiveLoss", "Accuracy"};
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
  if (net.layers_size() > 0) {
    return Refuse(where, net, "layers", 0,
                  "the net uses Caffe's old V1 'layers' format; upgrade it with Caffe's upgrade_net_proto_text tool "
                  "(it writes 'layer' blocks with string types)");
  }
  const FieldDescriptor* layer_field = net.GetDescriptor()->FindFieldByName("layer");
  if (net.layer_size() == 0) return InvalidArgument(filename + ": the net has no layers");
  Problems problems;
  Where top(filename, &tree);
  for (const FieldDescriptor* f : {net.GetDescriptor()->FindFieldByName("debug_info"), net.GetDescriptor()->FindFieldByName("state")}) {
    if (net.GetReflection()->HasField(net, f)) problems.Add(InvalidArgument(top.At(f) + ": " + f->name() + " is not used by shoal train; remove it"));
  }
  for (int i = 0; i < net.layer_size(); ++i) {
    const auto& layer = net.layer(i);
    std::string line = where.At(layer_field, i);
    Problems mine;
    CheckLayer(layer, where.Nested(layer_field, i), mine);
    if (layer.name().empty()) mine.Add(InvalidArgument(line + ": a layer of type " + layer.type() + " has no name"));
    if (mine.empty()) continue;
    // Messages that could not be pinned to a field get the layer's own line.
    for (std::string m : mine.list()) {
      if (m.rfind(filename + ":0:", 0) == 0) m = line + m.substr(filename.size() + 2);
      problems.Add(InvalidArgument(m));
    }
  }
  if (!problems.empty()) return problems.ToStatus(filename);
  // CaffeOnSpark's LMDB source class is the LMDB backend.
  for (auto& layer : *net.mutable_layer()) {
    if (layer.source_class() == "com.yahoo.ml.caffe.LMDB" && !layer.memory_data_param().has_backend()) {
      layer.mutable_memory_data_param()->set_backend(caffe::DataParameter::LMDB);
    }
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
  if (solver.test_state_size() > 0 && solver.test_state_size() != solver.test_iter_size()) {
    return Refuse(where, solver, "test_state", 0,
                  "give one test_state per test net (one per test_iter): " + std::to_string(solver.test_iter_size()) +
                      " test_iter, " + std::to_string(solver.test_state_size()) + " test_state");
  }
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

bool StateMeetsRule(const caffe::NetState& state, const caffe::NetStateRule& rule) {
  if (rule.has_phase() && rule.phase() != state.phase()) return false;
  if (rule.has_min_level() && state.level() < rule.min_level()) return false;
  if (rule.has_max_level() && state.level() > rule.max_level()) return false;
  auto has = [&](const std::string& stage) { return std::find(state.stage().begin(), state.stage().end(), stage) != state.stage().end(); };
  for (const auto& stage : rule.stage()) {
    if (!has(stage)) return false;
  }
  for (const auto& stage : rule.not_stage()) {
    if (has(stage)) return false;
  }
  return true;
}

caffe::NetParameter NetForState(const caffe::NetParameter& net, const caffe::NetState& state) {
  caffe::NetParameter out = net;
  out.clear_layer();
  for (const auto& layer : net.layer()) {
    bool keep = layer.include_size() == 0;
    for (const auto& rule : layer.include()) keep = keep || StateMeetsRule(state, rule);
    for (const auto& rule : layer.exclude()) keep = keep && !StateMeetsRule(state, rule);
    if (keep) *out.add_layer() = layer;
  }
  return out;
}

caffe::NetParameter NetForPhase(const caffe::NetParameter& net, caffe::Phase phase) {
  caffe::NetState state;
  state.set_phase(phase);
  return NetForState(net, state);
}

}  // namespace shoal::train
