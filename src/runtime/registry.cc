#include "runtime/frameworks.h"

namespace shoal {
namespace {

const std::vector<const FrameworkAdapter*>& All() {
  static const GenericFramework generic;
  static const PyTorchFramework pytorch;
  static const TensorFlowFramework tensorflow;
  static const MxNetFramework mxnet;
  static const XgboostFramework xgboost;
  static const MpiFramework mpi;
  static const ShoalTrainFramework shoal_train;
  static const std::vector<const FrameworkAdapter*> all = {&generic, &pytorch, &tensorflow, &mxnet, &xgboost, &mpi, &shoal_train};
  return all;
}

}  // namespace

const FrameworkAdapter* FindFramework(const std::string& name) {
  for (const auto* adapter : All()) {
    if (adapter->name() == name) return adapter;
  }
  return nullptr;
}

std::vector<std::string> KnownFrameworks() {
  std::vector<std::string> names;
  for (const auto* adapter : All()) names.push_back(adapter->name());
  return names;
}

}  // namespace shoal
