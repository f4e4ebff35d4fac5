// Layers: the forward computation of every layer type `shoal train` runs, on LibTorch
// (autograd gives each backward). Net (net.h) builds the graph, owns the parameter blobs
// and calls RunLayer once per layer; a layer only turns its bottoms and blobs into tops.
//
// Contract:
//  - RunLayer computes the tops of ctx.layer from ctx.bottoms, in the order of its `top`
//    fields. It obtains its parameter blobs through ctx.param(shape, filler, learnable),
//    in Caffe's blob order (weights, then bias, ...): during setup that registers the blob,
//    afterwards it returns the bound tensor.
//  - During setup (ctx.setup) a shape a layer cannot take is kInvalidArgument naming the
//    layer; the prototxt checks (prototxt.h) have already refused unsupported fields.
//  - In a TRAIN pass, BatchNorm queues its new statistics in ctx.pending (the net writes
//    them after backward) and Dropout draws its mask from ctx.seed and the layer index.
//  - The math is Caffe's, including its choices where frameworks differ (LRN's padding,
//    ceil-mode pooling, ContrastiveLoss's gradient, each loss's normalisation).
// Thread-safety: pure functions of their context; one thread per context.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "train/caffe.pb.h"

namespace shoal::train {

using ParamFn = std::function<torch::Tensor(std::vector<int64_t> shape, const caffe::FillerParameter& filler, bool learnable)>;

struct LayerContext {
  const caffe::LayerParameter& layer;
  size_t index = 0;  // the layer's position in the net
  caffe::Phase phase = caffe::TEST;
  bool train = false;
  bool setup = false;
  uint64_t seed = 0;
  std::vector<torch::Tensor> bottoms;
  ParamFn param;
  std::vector<std::pair<torch::Tensor, torch::Tensor>>* pending = nullptr;  // (state blob, new value)
};

Result<std::vector<torch::Tensor>> RunLayer(LayerContext& ctx);

// Layers whose tops come from outside the net: Data, MemoryData (a source) and Input.
bool IsInputLayer(const std::string& type);
// The weight of top `i` in the objective: `loss_weight` if given, else Caffe's default
// (1 for the first top of a layer whose type ends in "Loss", 0 otherwise).
float LossWeight(const caffe::LayerParameter& layer, int i);

// Fills `t` with Caffe's filler (constant, gaussian with `sparse`, uniform, xavier, msra),
// drawing from `gen`.
void FillBlob(torch::Tensor t, const caffe::FillerParameter& filler, at::Generator& gen);

}  // namespace shoal::train
