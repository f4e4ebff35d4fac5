#include "train/layers.h"

#include <cmath>
#include <map>

namespace shoal::train {
namespace {

using Tops = std::vector<torch::Tensor>;
using LayerFn = Result<Tops> (*)(LayerContext&);

Status Bad(const LayerContext& c, const std::string& what) {
  return InvalidArgument("layer '" + c.layer.name() + "' (" + c.layer.type() + "): " + what);
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

std::string ShapeText(const torch::Tensor& t) {
  std::string s;
  for (int64_t d : t.sizes()) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

// A shape with 1 everywhere but `axis`, to broadcast a per-channel blob over a bottom.
std::vector<int64_t> ChannelView(const torch::Tensor& x, int axis, int64_t c) {
  std::vector<int64_t> view(x.dim(), 1);
  view[axis] = c;
  return view;
}

// Caffe's normaliser for losses over N x ... outputs (LossLayer::GetNormalizer).
double Normalizer(caffe::LossParameter::NormalizationMode mode, int64_t outer, int64_t count, double valid) {
  double n = 1.0;
  switch (mode) {
    case caffe::LossParameter::FULL: n = static_cast<double>(count); break;
    case caffe::LossParameter::VALID: n = valid < 0 ? static_cast<double>(count) : valid; break;
    case caffe::LossParameter::BATCH_SIZE: n = static_cast<double>(outer); break;
    case caffe::LossParameter::NONE: n = 1.0; break;
  }
  return std::max(1.0, n);
}

caffe::LossParameter::NormalizationMode NormalizationOf(const caffe::LossParameter& p,
                                                        caffe::LossParameter::NormalizationMode dflt) {
  if (p.has_normalization()) return p.normalization();
  if (p.has_normalize()) return p.normalize() ? caffe::LossParameter::VALID : caffe::LossParameter::BATCH_SIZE;
  return dflt;
}

// ---- Vision ----------------------------------------------------------------------------

Result<Tops> Convolution(LayerContext& c) {
  const auto& p = c.layer.convolution_param();
  const torch::Tensor& x = c.bottoms[0];
  if (x.dim() != 4) return Bad(c, "needs a 4-D bottom (N, C, H, W), got " + ShapeText(x));
  const bool deconv = c.layer.type() == "Deconvolution";
  auto k = TwoD(p.kernel_size(), p.has_kernel_h(), p.kernel_h(), p.has_kernel_w(), p.kernel_w(), 1);
  auto pad = TwoD(p.pad(), p.has_pad_h(), p.pad_h(), p.has_pad_w(), p.pad_w(), 0);
  auto stride = TwoD(p.stride(), p.has_stride_h(), p.stride_h(), p.has_stride_w(), p.stride_w(), 1);
  auto dil = TwoD(p.dilation(), false, 0, false, 0, 1);
  int64_t group = p.group();
  if (x.size(1) % group != 0 || p.num_output() % group != 0) {
    return Bad(c, "group " + std::to_string(group) + " does not divide the channels");
  }
  // Caffe's blob shapes: Convolution (out, in/g, kh, kw); Deconvolution (in, out/g, kh, kw).
  std::vector<int64_t> shape = deconv ? std::vector<int64_t>{x.size(1), p.num_output() / group, k[0], k[1]}
                                      : std::vector<int64_t>{p.num_output(), x.size(1) / group, k[0], k[1]};
  torch::Tensor w = c.param(shape, p.weight_filler(), true);
  torch::Tensor b;
  if (p.bias_term()) b = c.param({p.num_output()}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
  if (deconv) return Tops{torch::conv_transpose2d(x, w, b, stride, pad, {0, 0}, group, dil)};
  if (c.setup && (x.size(2) + 2 * pad[0] < dil[0] * (k[0] - 1) + 1 || x.size(3) + 2 * pad[1] < dil[1] * (k[1] - 1) + 1)) {
    return Bad(c, "the kernel is larger than its input (" + ShapeText(x) + ")");
  }
  return Tops{torch::conv2d(x, w, b, stride, pad, dil, group)};
}

// x (..., K) times w (out, K), plus b: torch::linear's result. On the CPU, where LibTorch
// has oneDNN, computed as a 1 x 1 convolution: LibTorch's linear multiplies through its
// BLAS, which on Debian is the reference one, and oneDNN's convolution does the same
// arithmetic 7.8x faster (LeNet's 800 x 500 layer, batch 64, forward and backward, one
// thread: 44 ms against 5.6 ms; results equal to 1e-4, the same bytes run after run and
// with 1 or 2 threads).
torch::Tensor Linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  if (!x.is_cpu() || x.scalar_type() != torch::kFloat || x.dim() < 1 || x.numel() == 0 || !at::hasMKLDNN()) {
    return torch::linear(x, w, b);
  }
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = w.size(0);
  torch::Tensor rows = x.reshape({-1, x.size(-1), 1, 1});
  return torch::conv2d(rows, w.reshape({w.size(0), w.size(1), 1, 1}), b).reshape(shape);
}

Result<Tops> InnerProduct(LayerContext& c) {
  const auto& p = c.layer.inner_product_param();
  const torch::Tensor& x = c.bottoms[0];
  int axis = Axis(p.axis(), x.dim());
  torch::Tensor flat = axis + 1 < x.dim() ? x.flatten(axis) : x;
  int64_t k = flat.size(axis);
  std::vector<int64_t> shape = p.transpose() ? std::vector<int64_t>{k, p.num_output()} : std::vector<int64_t>{p.num_output(), k};
  torch::Tensor w = c.param(shape, p.weight_filler(), true);
  torch::Tensor b;
  if (p.bias_term()) b = c.param({p.num_output()}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
  return Tops{Linear(flat, p.transpose() ? w.t() : w, b)};
}

Result<Tops> Pooling(LayerContext& c) {
  const auto& p = c.layer.pooling_param();
  const torch::Tensor& x = c.bottoms[0];
  if (x.dim() != 4) return Bad(c, "needs a 4-D bottom (N, C, H, W), got " + ShapeText(x));
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
  if (c.setup && (pad[0] * 2 > k[0] || pad[1] * 2 > k[1])) return Bad(c, "pad must be at most half the kernel size");
  if (p.pool() == caffe::PoolingParameter::MAX) return Tops{torch::max_pool2d(x, k, stride, pad, {1, 1}, /*ceil_mode=*/true)};
  return Tops{torch::avg_pool2d(x, k, stride, pad, /*ceil_mode=*/true, /*count_include_pad=*/true)};
}

// Caffe's LRN. ACROSS_CHANNELS: x / (k + alpha/n sum over n channels of x^2)^beta, the
// window centred with (n-1)/2 zero channels on each side; WITHIN_CHANNEL:
// x / (1 + alpha/n^2 sum over an n x n window of x^2)^beta (Caffe uses 1, not k, there).
Result<Tops> LRN(LayerContext& c) {
  const auto& p = c.layer.lrn_param();
  const torch::Tensor& x = c.bottoms[0];
  if (x.dim() != 4) return Bad(c, "needs a 4-D bottom (N, C, H, W), got " + ShapeText(x));
  const int64_t n = p.local_size();
  const int64_t pre = (n - 1) / 2;
  torch::Tensor sq = x * x;
  torch::Tensor scale;
  if (p.norm_region() == caffe::LRNParameter::ACROSS_CHANNELS) {
    // Average over channel windows: pool a (N, 1, C, H*W) view along C.
    torch::Tensor v = sq.reshape({x.size(0), 1, x.size(1), x.size(2) * x.size(3)});
    v = torch::constant_pad_nd(v, {0, 0, pre, pre});
    v = torch::avg_pool2d(v, {n, 1}, {1, 1}).reshape(x.sizes());
    scale = v * p.alpha() + p.k();
  } else {
    torch::Tensor v = torch::avg_pool2d(sq, {n, n}, {1, 1}, {pre, pre}, /*ceil_mode=*/true, /*count_include_pad=*/true);
    scale = v * p.alpha() + 1.0;
  }
  return Tops{x * torch::pow(scale, -p.beta())};
}

// ---- Neurons -----------------------------------------------------------------------------

Result<Tops> Neuron(LayerContext& c) {
  const std::string& type = c.layer.type();
  const torch::Tensor& x = c.bottoms[0];
  if (type == "ReLU") {
    float slope = c.layer.relu_param().negative_slope();
    return Tops{slope == 0 ? torch::relu(x) : torch::leaky_relu(x, slope)};
  }
  if (type == "Sigmoid") return Tops{torch::sigmoid(x)};
  if (type == "TanH") return Tops{torch::tanh(x)};
  if (type == "AbsVal") return Tops{torch::abs(x)};
  if (type == "BNLL") return Tops{torch::softplus(x)};
  if (type == "ELU") return Tops{torch::elu(x, c.layer.elu_param().alpha())};
  if (type == "Swish") return Tops{x * torch::sigmoid(x * c.layer.swish_param().beta())};
  if (type == "Threshold") return Tops{(x > c.layer.threshold_param().threshold()).to(x.scalar_type())};
  if (type == "Clip") return Tops{torch::clamp(x, c.layer.clip_param().min(), c.layer.clip_param().max())};
  if (type == "Power") {
    const auto& p = c.layer.power_param();
    torch::Tensor base = x * p.scale() + p.shift();
    return Tops{p.power() == 1.0f ? base : torch::pow(base, p.power())};
  }
  if (type == "Exp") {
    const auto& p = c.layer.exp_param();
    double ln_base = p.base() == -1.0f ? 1.0 : std::log(static_cast<double>(p.base()));
    return Tops{torch::exp((x * p.scale() + p.shift()) * ln_base)};
  }
  if (type == "Log") {
    const auto& p = c.layer.log_param();
    double ln_base = p.base() == -1.0f ? 1.0 : std::log(static_cast<double>(p.base()));
    return Tops{torch::log(x * p.scale() + p.shift()) / ln_base};
  }
  return Bad(c, "not a neuron layer");
}

Result<Tops> PReLU(LayerContext& c) {
  const auto& p = c.layer.prelu_param();
  const torch::Tensor& x = c.bottoms[0];
  if (x.dim() < 2) return Bad(c, "needs a bottom with channels (N, C, ...), got " + ShapeText(x));
  int64_t channels = p.channel_shared() ? 1 : x.size(1);
  torch::Tensor a = c.param({channels}, p.has_filler() ? p.filler() : Constant(0.25f), true);
  torch::Tensor slope = p.channel_shared() ? a : a.view(ChannelView(x, 1, channels));
  return Tops{torch::relu(x) + slope * torch::clamp_max(x, 0)};
}

Result<Tops> Dropout(LayerContext& c) {
  float ratio = c.layer.dropout_param().dropout_ratio();
  const torch::Tensor& x = c.bottoms[0];
  if (!c.train || ratio <= 0 || c.setup) return Tops{x};
  at::Generator gen = at::detail::createCPUGenerator(c.seed ^ (0x9e3779b97f4a7c15ULL * (c.index + 1)));
  torch::Tensor mask = torch::empty_like(x).bernoulli_(1.0 - ratio, gen);
  return Tops{x * mask / (1.0 - ratio)};
}

// ---- Normalisation and learned affine ------------------------------------------------------

Result<Tops> BatchNorm(LayerContext& c) {
  const auto& p = c.layer.batch_norm_param();
  const torch::Tensor& x = c.bottoms[0];
  if (x.dim() < 2) return Bad(c, "needs a bottom with channels (N, C, ...), got " + ShapeText(x));
  int64_t ch = x.size(1);
  torch::Tensor mean = c.param({ch}, Constant(0), false);
  torch::Tensor var = c.param({ch}, Constant(0), false);
  torch::Tensor factor = c.param({1}, Constant(0), false);
  bool global = p.has_use_global_stats() ? p.use_global_stats() : c.phase == caffe::TEST;
  if (global || !c.train) {
    torch::Tensor scale;
    {
      torch::NoGradGuard no_grad;
      float f = factor.item<float>();
      scale = torch::full({1}, f == 0 ? 0.0f : 1.0f / f);
    }
    return Tops{torch::batch_norm(x, {}, {}, mean * scale, var * scale, false, 0.0, p.eps(), false)};
  }
  torch::Tensor y = torch::batch_norm(x, {}, {}, {}, {}, true, 0.0, p.eps(), false);
  if (!c.setup) {
    torch::NoGradGuard no_grad;
    std::vector<int64_t> dims = {0};
    for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
    int64_t m = x.numel() / ch;
    torch::Tensor xd = x.detach();
    torch::Tensor bmean = xd.mean(dims);
    torch::Tensor bvar = xd.var(dims, /*unbiased=*/false) * (m > 1 ? static_cast<double>(m) / (m - 1) : 1.0);
    float maf = p.moving_average_fraction();
    // Written after backward (Net::CommitState): the blobs share storage (and so autograd's
    // version counter) with the weights the backward pass still needs.
    c.pending->emplace_back(factor, factor * maf + 1.0);
    c.pending->emplace_back(mean, mean * maf + bmean);
    c.pending->emplace_back(var, var * maf + bvar);
  }
  return Tops{y};
}

// Scale and Bias with one bottom: a learned blob over the channel axis.
Result<Tops> ScaleOrBias(LayerContext& c) {
  const torch::Tensor& x = c.bottoms[0];
  if (x.dim() < 2) return Bad(c, "needs a bottom with channels (N, C, ...), got " + ShapeText(x));
  int64_t ch = x.size(1);
  auto view = ChannelView(x, 1, ch);
  if (c.layer.type() == "Bias") {
    const auto& p = c.layer.bias_param();
    torch::Tensor beta = c.param({ch}, p.has_filler() ? p.filler() : Constant(0), true);
    return Tops{x + beta.view(view)};
  }
  const auto& p = c.layer.scale_param();
  torch::Tensor gamma = c.param({ch}, p.has_filler() ? p.filler() : Constant(1), true);
  torch::Tensor y = x * gamma.view(view);
  if (p.bias_term()) {
    torch::Tensor beta = c.param({ch}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
    y = y + beta.view(view);
  }
  return Tops{y};
}

Result<Tops> MVN(LayerContext& c) {
  const auto& p = c.layer.mvn_param();
  const torch::Tensor& x = c.bottoms[0];
  torch::Tensor v = x.reshape({x.size(0), p.across_channels() ? 1 : (x.dim() > 1 ? x.size(1) : 1), -1});
  torch::Tensor y = v - v.mean(-1, true);
  if (p.normalize_variance()) y = y / (torch::sqrt((y * y).mean(-1, true)) + p.eps());
  return Tops{y.reshape(x.sizes())};
}

// ---- Shape -------------------------------------------------------------------------------

Result<Tops> Flatten(LayerContext& c) {
  const auto& p = c.layer.flatten_param();
  const torch::Tensor& x = c.bottoms[0];
  return Tops{x.flatten(Axis(p.axis(), x.dim()), Axis(p.end_axis(), x.dim()))};
}

// Caffe's Reshape: `shape` replaces axes [axis, axis + num_axes) of the bottom; 0 copies
// the bottom's dimension, one -1 is inferred.
Result<Tops> Reshape(LayerContext& c) {
  const auto& p = c.layer.reshape_param();
  const torch::Tensor& x = c.bottoms[0];
  const int64_t dims = x.dim();
  int64_t start = p.axis() < 0 ? dims + 1 + p.axis() : p.axis();
  int64_t end = p.num_axes() == -1 ? dims : start + p.num_axes();
  if (start < 0 || start > dims || end > dims || end < start) return Bad(c, "axis and num_axes do not fit a bottom of " + ShapeText(x));
  std::vector<int64_t> out(x.sizes().begin(), x.sizes().begin() + start);
  int infer = -1;
  for (int i = 0; i < p.shape().dim_size(); ++i) {
    int64_t d = p.shape().dim(i);
    if (d == 0) {
      if (start + i >= dims) return Bad(c, "shape dim " + std::to_string(i) + " is 0 but the bottom has no axis to copy");
      d = x.size(start + i);
    } else if (d == -1) {
      if (infer >= 0) return Bad(c, "shape may infer (-1) only one dimension");
      infer = static_cast<int>(out.size());
    }
    out.push_back(d);
  }
  out.insert(out.end(), x.sizes().begin() + end, x.sizes().end());
  if (infer >= 0) {
    int64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int>(i) != infer) known *= out[i];
    }
    if (known == 0 || x.numel() % known != 0) return Bad(c, "cannot infer the -1 dimension for a bottom of " + ShapeText(x));
    out[infer] = x.numel() / known;
  }
  int64_t count = 1;
  for (int64_t d : out) count *= d;
  if (count != x.numel()) return Bad(c, "shape holds " + std::to_string(count) + " values; the bottom (" + ShapeText(x) + ") holds " + std::to_string(x.numel()));
  return Tops{x.reshape(out)};
}

Result<Tops> Concat(LayerContext& c) {
  const auto& p = c.layer.concat_param();
  const torch::Tensor& x = c.bottoms[0];
  int axis = Axis(p.has_axis() || !p.has_concat_dim() ? p.axis() : static_cast<int>(p.concat_dim()), x.dim());
  if (c.setup) {
    for (const auto& t : c.bottoms) {
      bool same = t.dim() == x.dim();
      for (int64_t d = 0; same && d < x.dim(); ++d) same = d == axis || t.size(d) == x.size(d);
      if (!same) return Bad(c, "bottoms differ outside axis " + std::to_string(axis) + " (" + ShapeText(x) + " and " + ShapeText(t) + ")");
    }
  }
  return Tops{torch::cat(c.bottoms, axis)};
}

Result<Tops> Slice(LayerContext& c) {
  const auto& p = c.layer.slice_param();
  const torch::Tensor& x = c.bottoms[0];
  int axis = Axis(p.has_axis() || !p.has_slice_dim() ? p.axis() : static_cast<int>(p.slice_dim()), x.dim());
  const int64_t n = x.size(axis);
  const int tops = c.layer.top_size();
  std::vector<int64_t> points;
  if (p.slice_point_size() > 0) {
    if (p.slice_point_size() != tops - 1) return Bad(c, "needs " + std::to_string(tops - 1) + " slice_point values for " + std::to_string(tops) + " tops");
    points.assign(p.slice_point().begin(), p.slice_point().end());
  } else {
    if (n % tops != 0) return Bad(c, "axis " + std::to_string(axis) + " (" + std::to_string(n) + ") does not split evenly into " + std::to_string(tops) + " tops");
    for (int i = 1; i < tops; ++i) points.push_back(n / tops * i);
  }
  Tops out;
  int64_t begin = 0;
  points.push_back(n);
  for (int64_t end : points) {
    if (end <= begin || end > n) return Bad(c, "slice points must increase within the axis (0, " + std::to_string(n) + ")");
    out.push_back(x.narrow(axis, begin, end - begin));
    begin = end;
  }
  return out;
}

Result<Tops> Split(LayerContext& c) { return Tops(c.layer.top_size(), c.bottoms[0]); }

Result<Tops> Silence(LayerContext&) { return Tops{}; }

Result<Tops> Eltwise(LayerContext& c) {
  const auto& p = c.layer.eltwise_param();
  if (p.coeff_size() > 0 && p.operation() != caffe::EltwiseParameter::SUM) return Bad(c, "coeff is only for operation SUM");
  if (p.coeff_size() > 0 && p.coeff_size() != static_cast<int>(c.bottoms.size())) return Bad(c, "needs one coeff per bottom");
  if (c.setup) {
    for (const auto& t : c.bottoms) {
      if (!t.sizes().equals(c.bottoms[0].sizes())) return Bad(c, "bottoms differ in shape (" + ShapeText(c.bottoms[0]) + " and " + ShapeText(t) + ")");
    }
  }
  torch::Tensor y;
  for (size_t i = 0; i < c.bottoms.size(); ++i) {
    torch::Tensor t = c.bottoms[i];
    if (p.operation() == caffe::EltwiseParameter::SUM && p.coeff_size() > 0 && p.coeff(static_cast<int>(i)) != 1.0f) t = t * p.coeff(static_cast<int>(i));
    if (!y.defined()) {
      y = t;
    } else if (p.operation() == caffe::EltwiseParameter::SUM) {
      y = y + t;
    } else if (p.operation() == caffe::EltwiseParameter::PROD) {
      y = y * t;
    } else {
      y = torch::maximum(y, t);
    }
  }
  return Tops{y};
}

Result<Tops> Crop(LayerContext& c) {
  const auto& p = c.layer.crop_param();
  const torch::Tensor& x = c.bottoms[0];
  const torch::Tensor& ref = c.bottoms[1];
  int axis = Axis(p.axis(), x.dim());
  int cropped = static_cast<int>(x.dim()) - axis;
  if (p.offset_size() > 1 && p.offset_size() != cropped) return Bad(c, "needs 1 or " + std::to_string(cropped) + " offsets");
  torch::Tensor y = x;
  for (int d = axis; d < x.dim(); ++d) {
    int64_t off = p.offset_size() == 0 ? 0 : p.offset(p.offset_size() == 1 ? 0 : d - axis);
    if (off + ref.size(d) > x.size(d)) return Bad(c, "the crop of axis " + std::to_string(d) + " falls outside the bottom");
    y = y.narrow(d, off, ref.size(d));
  }
  return Tops{y};
}

Result<Tops> Tile(LayerContext& c) {
  const auto& p = c.layer.tile_param();
  const torch::Tensor& x = c.bottoms[0];
  if (p.tiles() < 1) return Bad(c, "tiles must be at least 1");
  std::vector<int64_t> reps(x.dim(), 1);
  reps[Axis(p.axis(), x.dim())] = p.tiles();
  return Tops{x.repeat(reps)};
}

Result<Tops> Reduction(LayerContext& c) {
  const auto& p = c.layer.reduction_param();
  const torch::Tensor& x = c.bottoms[0];
  int axis = Axis(p.axis(), x.dim());
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= x.size(d);
  torch::Tensor v = x.reshape({outer, -1});
  torch::Tensor r;
  switch (p.operation()) {
    case caffe::ReductionParameter::SUM: r = v.sum(1); break;
    case caffe::ReductionParameter::ASUM: r = v.abs().sum(1); break;
    case caffe::ReductionParameter::SUMSQ: r = (v * v).sum(1); break;
    case caffe::ReductionParameter::MEAN: r = v.mean(1); break;
  }
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
  return Tops{(r * p.coeff()).reshape(shape)};
}

Result<Tops> ArgMax(LayerContext& c) {
  torch::NoGradGuard no_grad;
  const auto& p = c.layer.argmax_param();
  const torch::Tensor& x = c.bottoms[0].detach();
  if (p.has_axis()) {
    int axis = Axis(p.axis(), x.dim());
    auto [values, indices] = x.topk(p.top_k(), axis);
    return Tops{p.out_max_val() ? values : indices.to(x.scalar_type())};
  }
  torch::Tensor flat = x.reshape({x.size(0), -1});
  auto [values, indices] = flat.topk(p.top_k(), 1);
  torch::Tensor idx = indices.to(x.scalar_type()).unsqueeze(1);
  return Tops{p.out_max_val() ? torch::cat({idx, values.unsqueeze(1)}, 1) : idx};
}

Result<Tops> Embed(LayerContext& c) {
  const auto& p = c.layer.embed_param();
  torch::Tensor w = c.param({p.input_dim(), p.num_output()}, p.weight_filler(), true);
  torch::Tensor idx = c.bottoms[0].detach().to(torch::kLong);
  if (!c.setup && (idx.min().item<int64_t>() < 0 || idx.max().item<int64_t>() >= p.input_dim())) {
    return Bad(c, "an index falls outside input_dim " + std::to_string(p.input_dim()));
  }
  torch::Tensor y = torch::embedding(w, idx.clamp(0, static_cast<int64_t>(p.input_dim()) - 1));
  if (p.bias_term()) y = y + c.param({p.num_output()}, p.has_bias_filler() ? p.bias_filler() : Constant(0), true);
  return Tops{y};
}

Result<Tops> Softmax(LayerContext& c) {
  const torch::Tensor& x = c.bottoms[0];
  return Tops{torch::softmax(x, Axis(c.layer.softmax_param().axis(), x.dim()))};
}

// ---- Losses and metrics -------------------------------------------------------------------

Result<Tops> SoftmaxWithLoss(LayerContext& c) {
  const torch::Tensor& x = c.bottoms[0];
  int axis = Axis(c.layer.softmax_param().axis(), x.dim());
  torch::Tensor logp = torch::log_softmax(x, axis);
  torch::Tensor label = c.bottoms[1].to(torch::kLong).view({-1});
  if (axis != 1 || x.dim() != 2) logp = logp.movedim(axis, -1).reshape({-1, x.size(axis)});
  if (c.setup && logp.size(0) != label.numel()) {
    return Bad(c, "has " + std::to_string(logp.size(0)) + " predictions but " + std::to_string(label.numel()) + " labels");
  }
  const auto& lp = c.layer.loss_param();
  int64_t ignore = lp.has_ignore_label() ? lp.ignore_label() : -100;
  torch::Tensor per = torch::nll_loss(logp, label, {}, at::Reduction::None, ignore);
  double valid = lp.has_ignore_label() ? (label != ignore).sum().item<double>() : -1;
  double n = Normalizer(NormalizationOf(lp, caffe::LossParameter::VALID), x.size(0), label.numel(), valid);
  return Tops{per.sum() / n};
}

// Caffe's SigmoidCrossEntropyLoss: -[t log s(x) + (1 - t) log(1 - s(x))] per element, in
// the stable form; BATCH_SIZE normalisation unless the file says otherwise.
Result<Tops> SigmoidCrossEntropyLoss(LayerContext& c) {
  const torch::Tensor& x = c.bottoms[0];
  torch::Tensor t = c.bottoms[1];
  if (c.setup && x.numel() != t.numel()) return Bad(c, "bottoms differ in size (" + ShapeText(x) + " and " + ShapeText(t) + ")");
  t = t.reshape(x.sizes());
  torch::Tensor per = torch::binary_cross_entropy_with_logits(x, t, {}, {}, at::Reduction::None);
  const auto& lp = c.layer.loss_param();
  double valid = -1;
  if (lp.has_ignore_label()) {
    torch::Tensor keep = (t != static_cast<float>(lp.ignore_label())).to(x.scalar_type());
    per = per * keep;
    valid = keep.sum().item<double>();
  }
  double n = Normalizer(NormalizationOf(lp, caffe::LossParameter::BATCH_SIZE), x.size(0), x.numel(), valid);
  return Tops{per.sum() / n};
}

// Caffe's EuclideanLoss: sum((a - b)^2) / 2N.
Result<Tops> EuclideanLoss(LayerContext& c) {
  const torch::Tensor& a = c.bottoms[0];
  const torch::Tensor& b = c.bottoms[1];
  if (c.setup && a.numel() != b.numel()) return Bad(c, "bottoms differ in size (" + ShapeText(a) + " and " + ShapeText(b) + ")");
  torch::Tensor diff = a - b.reshape(a.sizes());
  return Tops{(diff * diff).sum() / (2.0 * a.size(0))};
}

// Caffe's ContrastiveLoss over pairs (a_i, b_i) with similarity y_i:
// y d^2 + (1 - y) max(margin - d, 0)^2 (legacy: max(margin - d^2, 0)), summed over 2N.
// The gradient is Caffe's too: it divides by d + 1e-4 where d is 0.
Result<Tops> ContrastiveLoss(LayerContext& c) {
  const auto& p = c.layer.contrastive_loss_param();
  torch::Tensor a = c.bottoms[0].reshape({c.bottoms[0].size(0), -1});
  torch::Tensor b = c.bottoms[1].reshape({c.bottoms[1].size(0), -1});
  if (c.setup && !a.sizes().equals(b.sizes())) return Bad(c, "the two feature bottoms differ in shape");
  torch::Tensor sim = c.bottoms[2].reshape({-1}).to(a.scalar_type());
  if (c.setup && sim.numel() != a.size(0)) return Bad(c, "needs one similarity label per pair");
  torch::Tensor diff = a - b;
  torch::Tensor d2 = (diff * diff).sum(1);
  torch::Tensor dissimilar;
  if (p.legacy_version()) {
    dissimilar = torch::clamp_min(p.margin() - d2, 0);
  } else {
    torch::Tensor dist = torch::sqrt(d2.detach());
    torch::Tensor mdist = torch::clamp_min(p.margin() - dist, 0);
    torch::Tensor surrogate = -(mdist / (dist + 1e-4)) * d2;  // its gradient is Caffe's
    dissimilar = mdist * mdist + surrogate - surrogate.detach();
  }
  torch::Tensor per = sim * d2 + (1 - sim) * dissimilar;
  return Tops{per.sum() / (2.0 * a.size(0))};
}

Result<Tops> Accuracy(LayerContext& c) {
  torch::NoGradGuard no_grad;
  const auto& p = c.layer.accuracy_param();
  const torch::Tensor& x = c.bottoms[0];
  int axis = Axis(p.axis(), x.dim());
  torch::Tensor scores = x.detach().movedim(axis, -1).reshape({-1, x.size(axis)});
  torch::Tensor label = c.bottoms[1].to(torch::kLong).view({-1});
  if (c.setup && scores.size(0) != label.numel()) {
    return Bad(c, "has " + std::to_string(scores.size(0)) + " predictions but " + std::to_string(label.numel()) + " labels");
  }
  int64_t k = std::min<int64_t>(p.top_k(), scores.size(1));
  torch::Tensor top = std::get<1>(scores.topk(k, 1));
  torch::Tensor hit = (top == label.unsqueeze(1)).any(1);
  torch::Tensor valid = p.has_ignore_label() ? (label != p.ignore_label()) : torch::ones_like(hit);
  double n = valid.sum().item<double>();
  return Tops{torch::full({}, n > 0 ? (hit & valid).sum().item<double>() / n : 0.0)};
}

const std::map<std::string, LayerFn>& Registry() {
  static const std::map<std::string, LayerFn> table = {
      {"Convolution", Convolution}, {"Deconvolution", Convolution}, {"InnerProduct", InnerProduct},
      {"Pooling", Pooling}, {"LRN", LRN},
      {"ReLU", Neuron}, {"Sigmoid", Neuron}, {"TanH", Neuron}, {"AbsVal", Neuron}, {"BNLL", Neuron},
      {"ELU", Neuron}, {"Swish", Neuron}, {"Threshold", Neuron}, {"Clip", Neuron}, {"Power", Neuron},
      {"Exp", Neuron}, {"Log", Neuron}, {"PReLU", PReLU}, {"Dropout", Dropout},
      {"BatchNorm", BatchNorm}, {"Scale", ScaleOrBias}, {"Bias", ScaleOrBias}, {"MVN", MVN},
      {"Flatten", Flatten}, {"Reshape", Reshape}, {"Concat", Concat}, {"Slice", Slice}, {"Split", Split},
      {"Silence", Silence}, {"Eltwise", Eltwise}, {"Crop", Crop}, {"Tile", Tile}, {"Reduction", Reduction},
      {"ArgMax", ArgMax}, {"Embed", Embed}, {"Softmax", Softmax},
      {"SoftmaxWithLoss", SoftmaxWithLoss}, {"SigmoidCrossEntropyLoss", SigmoidCrossEntropyLoss},
      {"EuclideanLoss", EuclideanLoss}, {"ContrastiveLoss", ContrastiveLoss}, {"Accuracy", Accuracy},
  };
  return table;
}

}  // namespace

Result<std::vector<torch::Tensor>> RunLayer(LayerContext& ctx) {
  auto fn = Registry().find(ctx.layer.type());
  if (fn == Registry().end()) return Bad(ctx, "this layer type is not supported");
  return fn->second(ctx);
}

bool IsInputLayer(const std::string& type) { return type == "Data" || type == "MemoryData" || type == "Input"; }

float LossWeight(const caffe::LayerParameter& layer, int i) {
  if (i < layer.loss_weight_size()) return layer.loss_weight(i);
  const std::string& type = layer.type();
  bool loss = type.size() >= 4 && type.compare(type.size() - 4, 4, "Loss") == 0;
  return loss && i == 0 ? 1.0f : 0.0f;
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
    // Caffe's sparse Gaussian: each weight kept with probability sparse / num_outputs.
    if (f.sparse() >= 0 && t.dim() >= 1) {
      double keep = std::min(1.0, static_cast<double>(f.sparse()) / static_cast<double>(t.size(0)));
      t.mul_(torch::empty_like(t).bernoulli_(keep, gen));
    }
  } else if (type == "uniform") {
    t.uniform_(f.min(), f.max(), gen);
  } else if (type == "xavier") {
    double scale = std::sqrt(3.0 / n);
    t.uniform_(-scale, scale, gen);
  } else if (type == "msra") {
    t.normal_(0.0, std::sqrt(2.0 / n), gen);
  }
}

}  // namespace shoal::train
