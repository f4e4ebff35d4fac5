// Net: a Caffe net definition (one phase) run on LibTorch. Every layer is a function of its
// bottoms and its parameter blobs; autograd gives the gradients.
//
// Contract:
//  - Create infers every blob's shape from the data layers' item shapes and lays the
//    parameter blobs out, in layer order, in one flat float buffer (Layout): learnable
//    blobs (weights, biases, Scale's) and state blobs (BatchNorm's mean, variance and
//    moving-average factor, Caffe's three blobs), each with its lr_mult and decay_mult.
//  - Bind makes this net's parameters views of caller-owned flat buffers (values and
//    gradients), so a replica's parameters are one contiguous tensor that the trainer
//    can sum, allreduce, update and copy in one go.
//  - Parameters shared by name (`param { name: "w" }` in two layers, as in Caffe) are one
//    blob: the first layer that names it owns it, later ones refer to it (BlobInfo::owner)
//    and take the same offset, so the flat buffer holds it once and its gradient sums
//    every use. Shapes (or, with share_mode PERMISSIVE, counts) and lr_mults must agree.
//  - Forward takes the input layers' tops (Data, MemoryData, Input, and the net's own
//    `input` blobs) and returns every blob by name; in TRAIN, BatchNorm computes new
//    state blobs (written by CommitState, after backward) and Dropout draws its mask from
//    `seed`, so the same seed gives the same pass. Layers themselves live in layers.h.
//  - The objective is Caffe's: the sum over every top of its loss weight (LossWeight in
//    layers.h) times the sum of its values.
// Ownership: does not own the flat buffers. Thread-safety: one thread per Net.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "train/caffe.pb.h"

namespace shoal::train {

struct BlobInfo {
  std::string layer;
  int index = 0;  // the blob's position among its layer's blobs (Caffe's order)
  std::vector<int64_t> shape;
  int64_t offset = 0, numel = 0;
  bool learnable = true;
  int owner = -1;  // index in Layout::blobs of the blob whose storage it shares (same offset), -1: its own
  float lr_mult = 1.0f, decay_mult = 1.0f;
  caffe::FillerParameter filler;
  std::string share_name;  // the ParamSpec name, if any
};

struct Layout {
  std::vector<BlobInfo> blobs;
  int64_t total = 0;
  const BlobInfo* Find(const std::string& layer, int index) const;
};

class Net {
 public:
  // `input_shapes`: for each Data or MemoryData layer, one item's shape (C, H, W). Input
  // layers and the net's `input` blobs carry their own shapes.
  static Result<std::unique_ptr<Net>> Create(const caffe::NetParameter& net, caffe::Phase phase,
                                             const std::map<std::string, std::vector<int64_t>>& input_shapes);

  const Layout& layout() const { return layout_; }
  const caffe::NetParameter& definition() const { return def_; }
  // Blobs no later layer consumes (what Caffe prints as the net's outputs).
  const std::vector<std::string>& outputs() const { return outputs_; }
  // The data layers' names and tops, in order.
  std::vector<const caffe::LayerParameter*> DataLayers() const;
  // Every blob's shape after setup (batch 2 for Data layers), by name; for tests and logs.
  const std::map<std::string, std::vector<int64_t>>& blob_shapes() const { return shapes_; }

  void Bind(torch::Tensor values, torch::Tensor grads);
  // After Bind: `ready(blob)` (an index in layout().blobs, an owner) runs on the backward
  // pass's thread as soon as that learnable blob's gradient is final in the bound buffer,
  // once per backward (autograd's post-accumulation hook; a shared blob's gradient is
  // summed over its uses first). A blob off the loss's path is never reported.
  void OnGradientReady(std::function<void(int blob)> ready);
  // Fills the bound values with the layers' fillers, drawing from `seed`.
  void Fill(uint64_t seed);
  Result<std::map<std::string, torch::Tensor>> Forward(const std::map<std::string, torch::Tensor>& inputs, bool train,
                                                       uint64_t seed);
  // Writes the state blobs a TRAIN Forward computed (BatchNorm's statistics); call it
  // after backward.
  void CommitState();
  // The weighted sum of the loss tops (0-dim), after Forward; undefined if the net has none.
  torch::Tensor Loss(const std::map<std::string, torch::Tensor>& blobs) const;

  // caffemodel: the layers' blobs as Caffe's NetParameter (binary protobuf). Caffe's
  // binary form holds a shared blob under every layer that uses it; its HDF5 form only
  // under its owner (`owners_only`: other layers get an empty placeholder blob).
  caffe::NetParameter ToProto(bool owners_only = false) const;
  // Copies the blobs of layers with the same name; counts must match (a model may leave
  // out blobs this net shares from another layer, as Caffe's HDF5 models do). Returns how
  // many blobs were copied.
  Result<int> LoadProto(const caffe::NetParameter& model);

 private:
  Net() = default;
  Status Run(const caffe::LayerParameter& layer, size_t layer_index, std::map<std::string, torch::Tensor>& blobs,
             bool train, uint64_t seed, bool setup);
  // Registers blob `index` of layer `layer` during setup (sharing by ParamSpec name).
  Result<torch::Tensor> Register(const caffe::LayerParameter& layer, int index, std::vector<int64_t> shape,
                                 const caffe::FillerParameter& filler, bool learnable);
  torch::Tensor Param(size_t layer_index, int i) const { return params_[first_param_[layer_index] + i]; }

  caffe::NetParameter def_;
  caffe::Phase phase_ = caffe::TEST;
  Layout layout_;
  std::vector<int> first_param_;      // per layer: index of its first blob in params_
  std::vector<int> param_count_;      // per layer
  std::vector<torch::Tensor> params_; // views into the bound buffer
  std::vector<std::string> outputs_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> pending_;  // (state blob, new value)
  // Kept alive so that every backward runs the same accumulators, with their hooks.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
};

}  // namespace shoal::train
