#include "train/net.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <set>

#include "train/layers.h"

namespace shoal::train {
namespace {

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

// A deploy file's `input`/`input_shape`/`input_dim` blobs, as the Input layer Caffe's
// upgrade tool would write.
Result<caffe::NetParameter> WithInputLayer(const caffe::NetParameter& def) {
  if (def.input_size() == 0) return def;
  caffe::NetParameter out;
  out.set_name(def.name());
  caffe::LayerParameter* input = out.add_layer();
  input->set_name("input");
  input->set_type("Input");
  const bool dims = def.input_shape_size() == 0;
  if (dims ? def.input_dim_size() != 4 * def.input_size() : def.input_shape_size() != def.input_size()) {
    return InvalidArgument("the net declares " + std::to_string(def.input_size()) +
                           " input blob(s); give one input_shape or four input_dim values for each");
  }
  for (int i = 0; i < def.input_size(); ++i) {
    input->add_top(def.input(i));
    caffe::BlobShape* shape = input->mutable_input_param()->add_shape();
    if (dims) {
      for (int d = 0; d < 4; ++d) shape->add_dim(def.input_dim(4 * i + d));
    } else {
      *shape = def.input_shape(i);
    }
  }
  for (const auto& layer : def.layer()) *out.add_layer() = layer;
  return out;
}

}  // namespace

const BlobInfo* Layout::Find(const std::string& layer, int index) const {
  for (const auto& b : blobs) {
    if (b.layer == layer && b.index == index) return &b;
  }
  return nullptr;
}

std::vector<const caffe::LayerParameter*> Net::DataLayers() const {
  std::vector<const caffe::LayerParameter*> out;
  for (const auto& l : def_.layer()) {
    if (l.type() == "Data" || l.type() == "MemoryData") out.push_back(&l);
  }
  return out;
}

Result<std::unique_ptr<Net>> Net::Create(const caffe::NetParameter& given, caffe::Phase phase,
                                         const std::map<std::string, std::vector<int64_t>>& input_shapes) {
  std::unique_ptr<Net> net(new Net());
  ASSIGN_OR_RETURN(net->def_, WithInputLayer(given));
  net->phase_ = phase;
  const caffe::NetParameter& def = net->def_;
  std::map<std::string, torch::Tensor> blobs;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < static_cast<size_t>(def.layer_size()); ++i) {
    const auto& layer = def.layer(static_cast<int>(i));
    net->first_param_.push_back(static_cast<int>(net->params_.size()));
    if (layer.type() == "Input") {
      const auto& p = layer.input_param();
      if (p.shape_size() != 1 && p.shape_size() != layer.top_size()) {
        return InvalidArgument("layer '" + layer.name() + "' (Input): give one shape, or one per top");
      }
      for (int t = 0; t < layer.top_size(); ++t) {
        const auto& dims = p.shape(p.shape_size() == 1 ? 0 : t).dim();
        std::vector<int64_t> shape(dims.begin(), dims.end());
        for (int64_t d : shape) {
          if (d <= 0) return InvalidArgument("layer '" + layer.name() + "' (Input): top '" + layer.top(t) + "' has shape " + ShapeText(shape) + "; every dimension must be positive");
        }
        blobs[layer.top(t)] = torch::zeros(shape);
      }
    } else if (IsInputLayer(layer.type())) {
      auto shape = input_shapes.find(layer.name());
      if (shape == input_shapes.end()) return Internal("no input shape for data layer " + layer.name());
      std::vector<int64_t> dims = {2};
      dims.insert(dims.end(), shape->second.begin(), shape->second.end());
      blobs[layer.top(0)] = torch::zeros(dims);
      if (layer.top_size() > 1) blobs[layer.top(1)] = torch::zeros({2});
    } else {
      for (const auto& bottom : layer.bottom()) {
        if (!blobs.count(bottom)) {
          return InvalidArgument("layer '" + layer.name() + "' takes bottom '" + bottom +
                                 "', which no earlier layer of the " + (phase == caffe::TRAIN ? "TRAIN" : "TEST") + " net produces");
        }
      }
      RETURN_IF_ERROR(net->Run(layer, i, blobs, false, 0, /*setup=*/true));
    }
    net->param_count_.push_back(static_cast<int>(net->params_.size()) - net->first_param_.back());
  }
  for (const auto& [name, t] : blobs) net->shapes_[name] = std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
  std::set<std::string> consumed;
  for (const auto& layer : def.layer()) {
    for (const auto& b : layer.bottom()) consumed.insert(b);
  }
  std::set<std::string> seen;
  for (const auto& layer : def.layer()) {
    if (IsInputLayer(layer.type())) continue;
    for (const auto& t : layer.top()) {
      if (!consumed.count(t) && seen.insert(t).second) net->outputs_.push_back(t);
    }
  }
  return net;
}

Result<torch::Tensor> Net::Register(const caffe::LayerParameter& layer, int index, std::vector<int64_t> shape,
                                    const caffe::FillerParameter& filler, bool learnable) {
  BlobInfo b;
  b.layer = layer.name();
  b.index = index;
  b.shape = shape;
  b.numel = Count(shape);
  b.learnable = learnable;
  b.filler = filler;
  const caffe::ParamSpec* spec = index < layer.param_size() ? &layer.param(index) : nullptr;
  if (learnable && spec != nullptr) {
    b.lr_mult = spec->lr_mult();
    b.decay_mult = spec->decay_mult();
  }
  if (!learnable) b.lr_mult = b.decay_mult = 0;
  if (spec != nullptr && !spec->name().empty()) {
    b.share_name = spec->name();
    for (size_t i = 0; i < layout_.blobs.size(); ++i) {
      const BlobInfo& o = layout_.blobs[i];
      if (o.owner >= 0 || o.share_name != b.share_name) continue;
      const std::string what = "layer '" + layer.name() + "': shared parameter '" + b.share_name + "'";
      bool permissive = spec->share_mode() == caffe::ParamSpec::PERMISSIVE;
      if (permissive ? o.numel != b.numel : o.shape != b.shape) {
        return InvalidArgument(what + " has shape " + ShapeText(b.shape) + " here and " + ShapeText(o.shape) + " in layer '" + o.layer +
                               "'" + (permissive ? "" : " (share_mode: PERMISSIVE compares only their counts)"));
      }
      if ((spec->has_lr_mult() && spec->lr_mult() != o.lr_mult) || (spec->has_decay_mult() && spec->decay_mult() != o.decay_mult)) {
        return InvalidArgument(what + " has another lr_mult or decay_mult than in layer '" + o.layer + "', which owns it; give the same values");
      }
      b.owner = static_cast<int>(i);
      b.offset = o.offset;
      b.lr_mult = o.lr_mult;
      b.decay_mult = o.decay_mult;
      layout_.blobs.push_back(b);
      params_.push_back(params_[i]);
      return params_.back();
    }
  }
  b.offset = layout_.total;
  layout_.total += b.numel;
  layout_.blobs.push_back(b);
  params_.push_back(torch::zeros(shape));
  return params_.back();
}

void Net::Bind(torch::Tensor values, torch::Tensor grads) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const BlobInfo& b = layout_.blobs[i];
    if (b.owner >= 0) {
      params_[i] = params_[b.owner];  // one leaf: autograd sums every use into one gradient
      continue;
    }
    torch::Tensor v = values.narrow(0, b.offset, b.numel).view(b.shape);
    if (b.learnable) {
      v.requires_grad_(true);
      v.mutable_grad() = grads.narrow(0, b.offset, b.numel).view(b.shape);
    }
    params_[i] = v;
  }
}

void Net::OnGradientReady(std::function<void(int blob)> ready) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const BlobInfo& b = layout_.blobs[i];
    if (b.owner >= 0 || !b.learnable) continue;
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
    if (!accumulator) continue;
    const int blob = static_cast<int>(i);
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [ready, blob](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          ready(blob);
          return outputs;
        }));
    accumulators_.push_back(std::move(accumulator));
  }
}

void Net::Fill(uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (layout_.blobs[i].owner < 0) FillBlob(params_[i], layout_.blobs[i].filler, gen);
  }
}

Status Net::Run(const caffe::LayerParameter& layer, size_t li, std::map<std::string, torch::Tensor>& blobs, bool train,
                uint64_t seed, bool setup) {
  LayerContext ctx{layer};
  ctx.index = li;
  ctx.phase = phase_;
  ctx.train = train;
  ctx.setup = setup;
  ctx.seed = seed;
  ctx.pending = &pending_;
  for (const auto& b : layer.bottom()) ctx.bottoms.push_back(blobs.at(b));
  int next = 0;
  Status registration = Status::Ok();
  ctx.param = [&](std::vector<int64_t> shape, const caffe::FillerParameter& filler, bool learnable) -> torch::Tensor {
    const int index = next++;
    if (!setup) return Param(li, index);
    auto blob = Register(layer, index, shape, filler, learnable);
    if (blob.ok()) return *blob;
    if (registration.ok()) registration = blob.status();
    return torch::zeros(shape);
  };
  Result<std::vector<torch::Tensor>> tops = InvalidArgument("");
  try {
    tops = RunLayer(ctx);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    return InvalidArgument("layer '" + layer.name() + "' (" + layer.type() + ") cannot run on its bottoms: " + what.substr(0, what.find('\n')));
  }
  RETURN_IF_ERROR(registration);
  if (!tops.ok()) return tops.status();
  if (static_cast<int>(tops->size()) != layer.top_size()) {
    return InvalidArgument("layer '" + layer.name() + "' (" + layer.type() + ") makes " + std::to_string(tops->size()) +
                           " top(s); the file names " + std::to_string(layer.top_size()));
  }
  for (int t = 0; t < layer.top_size(); ++t) blobs[layer.top(t)] = (*tops)[t];
  return Status::Ok();
}

Result<std::map<std::string, torch::Tensor>> Net::Forward(const std::map<std::string, torch::Tensor>& inputs, bool train,
                                                          uint64_t seed) {
  std::map<std::string, torch::Tensor> blobs = inputs;
  pending_.clear();
  for (size_t i = 0; i < static_cast<size_t>(def_.layer_size()); ++i) {
    const auto& layer = def_.layer(static_cast<int>(i));
    if (IsInputLayer(layer.type())) {
      for (const auto& top : layer.top()) {
        if (!blobs.count(top)) return InvalidArgument("the input blob '" + top + "' of layer '" + layer.name() + "' was not given");
      }
      continue;
    }
    RETURN_IF_ERROR(Run(layer, i, blobs, train, seed, false));
  }
  return blobs;
}

void Net::CommitState() {
  torch::NoGradGuard no_grad;
  for (auto& [blob, value] : pending_) blob.copy_(value);
  pending_.clear();
}

torch::Tensor Net::Loss(const std::map<std::string, torch::Tensor>& blobs) const {
  torch::Tensor loss;
  for (const auto& layer : def_.layer()) {
    for (int t = 0; t < layer.top_size(); ++t) {
      float w = LossWeight(layer, t);
      if (w == 0) continue;
      torch::Tensor term = blobs.at(layer.top(t)).sum() * w;
      loss = loss.defined() ? loss + term : term;
    }
  }
  return loss;
}

caffe::NetParameter Net::ToProto(bool owners_only) const {
  caffe::NetParameter out;
  out.set_name(def_.name());
  for (size_t i = 0; i < static_cast<size_t>(def_.layer_size()); ++i) {
    if (param_count_[i] == 0) continue;
    const auto& layer = def_.layer(static_cast<int>(i));
    caffe::LayerParameter* l = out.add_layer();
    l->set_name(layer.name());
    l->set_type(layer.type());
    for (int j = 0; j < param_count_[i]; ++j) {
      caffe::BlobProto* blob = l->add_blobs();
      if (owners_only && layout_.blobs[first_param_[i] + j].owner >= 0) continue;  // an empty placeholder
      torch::Tensor t = Param(i, j).detach().contiguous();
      for (int64_t d : t.sizes()) blob->mutable_shape()->add_dim(d);
      const float* p = t.data_ptr<float>();
      blob->mutable_data()->Add(p, p + t.numel());
    }
  }
  return out;
}

Result<int> Net::LoadProto(const caffe::NetParameter& model) {
  torch::NoGradGuard no_grad;
  int copied = 0;
  for (size_t i = 0; i < static_cast<size_t>(def_.layer_size()); ++i) {
    if (param_count_[i] == 0) continue;
    const auto& layer = def_.layer(static_cast<int>(i));
    const caffe::LayerParameter* source = nullptr;
    for (const auto& l : model.layer()) {
      if (l.name() == layer.name()) source = &l;
    }
    if (source == nullptr) continue;
    auto shared = [&](int j) { return layout_.blobs[first_param_[i] + j].owner >= 0; };
    int needed = param_count_[i];
    while (needed > 0 && shared(needed - 1)) --needed;  // a model may leave trailing shared blobs out
    if (source->blobs_size() < needed || source->blobs_size() > param_count_[i]) {
      return InvalidArgument("the model's layer '" + layer.name() + "' has " + std::to_string(source->blobs_size()) +
                             " blobs; the net's has " + std::to_string(param_count_[i]));
    }
    for (int j = 0; j < source->blobs_size(); ++j) {
      torch::Tensor t = Param(i, j);
      const auto& blob = source->blobs(j);
      if (blob.data_size() == 0 && !blob.has_shape() && shared(j)) continue;  // left out: its owner holds it
      if (blob.data_size() != t.numel()) {
        return InvalidArgument("the model's layer '" + layer.name() + "' blob " + std::to_string(j) + " has " +
                               std::to_string(blob.data_size()) + " values; the net needs " + std::to_string(t.numel()));
      }
      t.detach().view({-1}).copy_(torch::from_blob(const_cast<float*>(blob.data().data()), {t.numel()}));
      ++copied;
    }
  }
  return copied;
}

}  // namespace shoal::train
