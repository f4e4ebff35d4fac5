#include "train/net.h"

#include <cmath>
#include <set>

namespace shoal::train {
namespace {

using torch::indexing::Slice;

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Caffe's fan-in and fan-out: count / shape[0] and count / shape[1].
void FillBlob(torch::Tensor t, const caffe::FillerParameter& f, at::Generator& gen) {
  torch::NoGradGuard no_grad;
  const std::string& type = f.type();
  int64_t count = t.numel();
  double fan_in = t.dim() > 0 ? static_cast<double>(count) / t.size(0) : 1.0;
  double fan_out = t.dim() > 1 ? static_cast<double>(count) / t.size(1) : fan_in;
  double n = fan_in;
  if (f.variance_norm() == caffe::FillerParameter::FAN_OUT) n = fan_out;
  if (f.variance_norm() == caffe::FillerParameter::AVERAGE) n = (fan_in + fan_out) / 2;
  if (type == "constant") {
    t.fill_(f.value());
  } else if (type == "gaussian") {
    t.normal_(f.mean(), f.std(), gen);
  } else if (type == "uniform") {
    t.uniform_(f.min(), f.max(), gen);
  } else if (type == "xavier") {
    double scale = std::sqrt(3.0 / n);
    t.uniform_(-scale, scale, gen);
  } else if (type == "msra") {
    t.normal_(0.0, std::sqrt(2.0 / n), gen);
  }
}

caffe::FillerParameter Constant(float value) {
  caffe::FillerParameter f;
  f.set_type("constant");
  f.set_value(value);
  return f;
}

std::vector<int64_t> TwoD(const google::protobuf::RepeatedField<uint32_t>& v, bool has_h, uint32_t h, bool has_w,
                          uint32_t w, int64_t dflt) {
  if (has_h || has_w) return {has_h ? h : dflt, has_w ? w : dflt};
  if (v.empty()) return {dflt, dflt};
  if (v.size() == 1) return {v[0], v[0]};
  return {v[0], v[1]};
}

int Axis(int axis, int64_t dims) { return axis < 0 ? static_cast<int>(axis + dims) : axis; }

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

Result<std::unique_ptr<Net>> Net::Create(const caffe::NetParameter& def, caffe::Phase phase,
                                         const std::map<std::string, std::vector<int64_t>>& input_shapes) {
  std::unique_ptr<Net> net(new Net());
  net->def_ = def;
  net->phase_ = phase;
  std::map<std::string, torch::Tensor> blobs;
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < static_cast<size_t>(def.layer_size()); ++i) {
    const auto& layer = def.layer(static_cast<int>(i));
    net->first_param_.push_back(static_cast<int>(net->params_.size()));
    if (layer.type() == "Data" || layer.type() == "MemoryData") {
      auto shape = input_shapes.find(layer.name());
      if (shape == input_shapes.end()) return Internal("no input shape for data layer " + layer.name());
      std::vector<int64_t> dims = {2};
      dims.insert(dims.end(), shape->second.begin(), shape->second.end());
      blobs[layer.top(0)] = torch::zeros(dims);
      if (layer.top_size() > 1) blobs[layer.top(1)] = torch::zeros({2});
      net->param_count_.push_back(0);
      continue;
    }
    for (const auto& bottom : layer.bottom()) {
      if (!blobs.count(bottom)) {
        return InvalidArgument("layer '" + layer.name() + "' takes bottom '" + bottom +
                               "', which no earlier layer of the " + (phase == caffe::TRAIN ? "TRAIN" : "TEST") + " net produces");
      }
    }
    Status status = net->Run(layer, i, blobs, false, 0, /*setup=*/true);
    if (!status.ok()) return status;
    net->param_count_.push_back(static_cast<int>(net->params_.size()) - net->first_param_.back());
  }
  std::set<std::string> consumed;
  for (const auto& layer : def.layer()) {
    for (const auto& b : layer.bottom()) consumed.insert(b);
  }
  std::set<std::string> seen;
  for (const auto& layer : def.layer()) {
    if (layer.type() == "Data" || layer.type() == "MemoryData") continue;
    for (const auto& t : layer.top()) {
      if (!consumed.count(t) && seen.insert(t).second) net->outputs_.push_back(t);
    }
  }
  return net;
}

void Net::Bind(torch::Tensor values, torch::Tensor grads) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const BlobInfo& b = layout_.blobs[i];
    torch::Tensor v = values.narrow(0, b.offset, b.numel).view(b.shape);
    if (b.learnable) {
      v.requires_grad_(true);
      v.mutable_grad() = grads.narrow(0, b.offset, b.numel).view(b.shape);
    }
    params_[i] = v;
  }
}

void Net::Fill(uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (size_t i = 0; i < params_.size(); ++i) FillBlob(params_[i], layout_.blobs[i].filler, gen);
}

Status Net::Run(const caffe::LayerParameter& layer, size_t li, std::map<std::string, torch::Tensor>& blobs, bool train,
                uint64_t seed, bool setup) {
  const std::string& type = layer.type();
  torch::Tensor x = layer.bottom_size() > 0 ? blobs.at(layer.bottom(0)) : torch::Tensor();
  // Registers a blob during setup; returns its tensor.
  int next = 0;
  auto param = [&](std::vector<int64_t> shape, const caffe::FillerParameter& filler, bool learnable) {
    if (setup) {
      BlobInfo b;
      b.layer = layer.name();
      b.index = next;
      b.shape = shape;
      b.numel = Count(shape);
      b.offset = layout_.total;
      b.learnable = learnable;
      b.filler = filler;
      if (learnable && next < layer.param_size()) {
        b.lr_mult = layer.param(next).lr_mult();
        b.decay_mult = layer.param(next).decay_mult();
      }
      if (!learnable) b.lr_mult = b.decay_mult = 0;
      layout_.total += b.numel;
      layout_.blobs.push_back(b);
      params_.push_back(torch::zeros(shape));
    }
    return Param(li, next++);
  };
  torch::Tensor y;
  if (type == "Convolution") {
    const auto& p = layer.convolution_param();
    if (x.dim() != 4) return InvalidArgument("layer '" + layer.name() + "': Convolution needs a 4-D bottom (N, C, H, W)");
    auto k = TwoD(p.kernel_size(), p.has_kernel_h(), p.kernel_h(), p.has_kernel_w(), p.kernel_w(), 1);
    auto pad = TwoD(p.pad(), p.has_pad_h(), p.pad_h(), p.has_pad_w(), p.pad_w(), 0);
    auto stride = TwoD(p.stride(), p.has_stride_h(), p.stride_h(), p.has_stride_w(), p.stride_w(), 1);
    auto dil = TwoD(p.dilation(), false, 0, false, 0, 1);
    int64_t group = p.group();
    if (x.size(1) % group != 0 || p.num_output() % group != 0) {
      return InvalidArgument("layer '" + layer.name() + "': group " + std::to_string(group) + " does not divide the channels");
    }
    torch::Tensor w = param({p.num_output(), x.size(1) / group, k[0], k[1]}, p.weight_filler(), true);
    torch::Tensor b;
    if (p.bias_term()) b = param({p.num_output()}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
    if (setup && (x.size(2) + 2 * pad[0] < dil[0] * (k[0] - 1) + 1 || x.size(3) + 2 * pad[1] < dil[1] * (k[1] - 1) + 1)) {
      return InvalidArgument("layer '" + layer.name() + "': the kernel is larger than its input");
    }
    y = torch::conv2d(x, w, b, stride, pad, dil, group);
  } else if (type == "InnerProduct") {
    const auto& p = layer.inner_product_param();
    int axis = Axis(p.axis(), x.dim());
    torch::Tensor flat = axis + 1 < x.dim() ? x.flatten(axis) : x;
    torch::Tensor w = param({p.num_output(), flat.size(axis)}, p.weight_filler(), true);
    torch::Tensor b;
    if (p.bias_term()) b = param({p.num_output()}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
    y = torch::linear(flat, w, b);
  } else if (type == "Pooling") {
    const auto& p = layer.pooling_param();
    if (x.dim() != 4) return InvalidArgument("layer '" + layer.name() + "': Pooling needs a 4-D bottom (N, C, H, W)");
    std::vector<int64_t> k, pad, stride;
    if (p.global_pooling()) {
      k = {x.size(2), x.size(3)};
      pad = {0, 0};
      stride = {1, 1};
    } else {
      k = p.has_kernel_h() ? std::vector<int64_t>{p.kernel_h(), p.kernel_w()} : std::vector<int64_t>{p.kernel_size(), p.kernel_size()};
      pad = (p.has_pad_h() || p.has_pad_w()) ? std::vector<int64_t>{p.pad_h(), p.pad_w()} : std::vector<int64_t>{p.pad(), p.pad()};
      stride = p.has_stride_h() ? std::vector<int64_t>{p.stride_h(), p.stride_w()} : std::vector<int64_t>{p.stride(), p.stride()};
    }
    if (setup && (pad[0] * 2 > k[0] || pad[1] * 2 > k[1])) {
      return InvalidArgument("layer '" + layer.name() + "': pad must be at most half the kernel size");
    }
    if (p.pool() == caffe::PoolingParameter::MAX) {
      y = torch::max_pool2d(x, k, stride, pad, {1, 1}, /*ceil_mode=*/true);
    } else {
      y = torch::avg_pool2d(x, k, stride, pad, /*ceil_mode=*/true, /*count_include_pad=*/true);
    }
  } else if (type == "ReLU") {
    float slope = layer.relu_param().negative_slope();
    y = slope == 0 ? torch::relu(x) : torch::leaky_relu(x, slope);
  } else if (type == "Sigmoid") {
    y = torch::sigmoid(x);
  } else if (type == "TanH") {
    y = torch::tanh(x);
  } else if (type == "Dropout") {
    float ratio = layer.dropout_param().dropout_ratio();
    if (train && ratio > 0 && !setup) {
      at::Generator gen = at::detail::createCPUGenerator(seed ^ (0x9e3779b97f4a7c15ULL * (li + 1)));
      torch::Tensor mask = torch::empty_like(x).bernoulli_(1.0 - ratio, gen);
      y = x * mask / (1.0 - ratio);
    } else {
      y = x;
    }
  } else if (type == "BatchNorm") {
    const auto& p = layer.batch_norm_param();
    int64_t c = x.size(1);
    torch::Tensor mean = param({c}, Constant(0), false);
    torch::Tensor var = param({c}, Constant(0), false);
    torch::Tensor factor = param({1}, Constant(0), false);
    bool global = p.has_use_global_stats() ? p.use_global_stats() : phase_ == caffe::TEST;
    if (global || !train) {
      torch::Tensor scale;
      {
        torch::NoGradGuard no_grad;
        float f = factor.item<float>();
        scale = torch::full({1}, f == 0 ? 0.0f : 1.0f / f);
      }
      y = torch::batch_norm(x, {}, {}, mean * scale, var * scale, false, 0.0, p.eps(), false);
    } else {
      y = torch::batch_norm(x, {}, {}, {}, {}, true, 0.0, p.eps(), false);
      if (!setup) {
        torch::NoGradGuard no_grad;
        std::vector<int64_t> dims = {0};
        for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
        int64_t m = x.numel() / c;
        torch::Tensor xd = x.detach();
        torch::Tensor bmean = xd.mean(dims);
        torch::Tensor bvar = xd.var(dims, /*unbiased=*/false) * (m > 1 ? static_cast<double>(m) / (m - 1) : 1.0);
        float maf = p.moving_average_fraction();
        // Applied after backward (CommitState): the blobs share storage (and so autograd's
        // version counter) with the weights the backward pass still needs.
        pending_.emplace_back(factor, factor * maf + 1.0);
        pending_.emplace_back(mean, mean * maf + bmean);
        pending_.emplace_back(var, var * maf + bvar);
      }
    }
  } else if (type == "Scale") {
    const auto& p = layer.scale_param();
    int64_t c = x.size(1);
    torch::Tensor gamma = param({c}, p.has_filler() ? p.filler() : Constant(1), true);
    std::vector<int64_t> view(x.dim(), 1);
    view[1] = c;
    y = x * gamma.view(view);
    if (p.bias_term()) {
      torch::Tensor beta = param({c}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
      y = y + beta.view(view);
    }
  } else if (type == "Flatten") {
    const auto& p = layer.flatten_param();
    y = x.flatten(Axis(p.axis(), x.dim()), Axis(p.end_axis(), x.dim()));
  } else if (type == "Concat") {
    const auto& p = layer.concat_param();
    int axis = p.has_axis() || !p.has_concat_dim() ? p.axis() : static_cast<int>(p.concat_dim());
    std::vector<torch::Tensor> parts;
    for (const auto& b : layer.bottom()) parts.push_back(blobs.at(b));
    axis = Axis(axis, x.dim());
    if (setup) {
      for (const auto& t : parts) {
        bool same = t.dim() == x.dim();
        for (int64_t d = 0; same && d < x.dim(); ++d) same = d == axis || t.size(d) == x.size(d);
        if (!same) return InvalidArgument("layer '" + layer.name() + "': Concat bottoms differ outside axis " + std::to_string(axis));
      }
    }
    y = torch::cat(parts, axis);
  } else if (type == "Softmax") {
    y = torch::softmax(x, Axis(layer.softmax_param().axis(), x.dim()));
  } else if (type == "SoftmaxWithLoss") {
    int axis = Axis(layer.softmax_param().axis(), x.dim());
    torch::Tensor logp = torch::log_softmax(x, axis);
    torch::Tensor label = blobs.at(layer.bottom(1)).to(torch::kLong).view({-1});
    if (axis != 1 || x.dim() != 2) {
      logp = logp.movedim(axis, -1).reshape({-1, x.size(axis)});
    }
    const auto& lp = layer.loss_param();
    int64_t ignore = lp.has_ignore_label() ? lp.ignore_label() : -100;
    torch::Tensor per = torch::nll_loss(logp, label, {}, at::Reduction::None, ignore);
    auto mode = lp.normalization();
    if (!lp.has_normalization() && lp.has_normalize() && !lp.normalize()) mode = caffe::LossParameter::BATCH_SIZE;
    double denom = 1.0;
    if (mode == caffe::LossParameter::VALID) {
      denom = std::max<double>(1.0, lp.has_ignore_label() ? (label != ignore).sum().item<double>() : label.numel());
    } else if (mode == caffe::LossParameter::FULL) {
      denom = static_cast<double>(label.numel());
    } else if (mode == caffe::LossParameter::BATCH_SIZE) {
      denom = static_cast<double>(x.size(0));
    }
    y = per.sum() / denom;
  } else if (type == "Accuracy") {
    torch::NoGradGuard no_grad;
    const auto& p = layer.accuracy_param();
    int axis = Axis(p.axis(), x.dim());
    torch::Tensor scores = x.detach().movedim(axis, -1).reshape({-1, x.size(axis)});
    torch::Tensor label = blobs.at(layer.bottom(1)).to(torch::kLong).view({-1});
    int64_t k = std::min<int64_t>(p.top_k(), scores.size(1));
    torch::Tensor top = std::get<1>(scores.topk(k, 1));
    torch::Tensor hit = (top == label.unsqueeze(1)).any(1);
    torch::Tensor valid = p.has_ignore_label() ? (label != p.ignore_label()) : torch::ones_like(hit);
    double n = valid.sum().item<double>();
    y = torch::full({}, n > 0 ? (hit & valid).sum().item<double>() / n : 0.0);
  } else {
    return InvalidArgument("layer '" + layer.name() + "': type " + type + " is not supported");
  }
  blobs[layer.top(0)] = y;
  return Status::Ok();
}

Result<std::map<std::string, torch::Tensor>> Net::Forward(const std::map<std::string, torch::Tensor>& inputs, bool train,
                                                          uint64_t seed) {
  std::map<std::string, torch::Tensor> blobs = inputs;
  pending_.clear();
  for (size_t i = 0; i < static_cast<size_t>(def_.layer_size()); ++i) {
    const auto& layer = def_.layer(static_cast<int>(i));
    if (layer.type() == "Data" || layer.type() == "MemoryData") continue;
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
    if (layer.type() != "SoftmaxWithLoss") continue;
    double w = layer.loss_weight_size() > 0 ? layer.loss_weight(0) : 1.0;
    torch::Tensor term = blobs.at(layer.top(0)) * w;
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

caffe::NetParameter Net::ToProto() const {
  caffe::NetParameter out;
  out.set_name(def_.name());
  for (size_t i = 0; i < static_cast<size_t>(def_.layer_size()); ++i) {
    if (param_count_[i] == 0) continue;
    const auto& layer = def_.layer(static_cast<int>(i));
    caffe::LayerParameter* l = out.add_layer();
    l->set_name(layer.name());
    l->set_type(layer.type());
    for (int j = 0; j < param_count_[i]; ++j) {
      torch::Tensor t = Param(i, j).detach().contiguous();
      caffe::BlobProto* blob = l->add_blobs();
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
    if (source->blobs_size() != param_count_[i]) {
      return InvalidArgument("the model's layer '" + layer.name() + "' has " + std::to_string(source->blobs_size()) +
                             " blobs; the net's has " + std::to_string(param_count_[i]));
    }
    for (int j = 0; j < param_count_[i]; ++j) {
      torch::Tensor t = Param(i, j);
      const auto& blob = source->blobs(j);
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
