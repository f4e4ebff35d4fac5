// Fuzzes the prototxt parser (nets and solvers): no crash; an accepted net has only
// supported layer types, and a refusal names a place ("<file>:<line>").
#include <cstdint>
#include <cstdlib>
#include <string>

#include "train/prototxt.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto net = shoal::train::ParseNetText(text, "net.prototxt");
  if (net.ok()) {
    const auto& types = shoal::train::SupportedLayerTypes();
    for (const auto& layer : net->layer()) {
      bool known = false;
      for (const auto& t : types) known = known || t == layer.type();
      if (!known) std::abort();
    }
    (void)shoal::train::NetForPhase(*net, shoal::caffe::TRAIN);
  } else if (net.status().message().rfind("net.prototxt", 0) != 0) {
    std::abort();
  }
  auto solver = shoal::train::ParseSolverText(text, "solver.prototxt");
  if (!solver.ok() && solver.status().message().rfind("solver.prototxt", 0) != 0) std::abort();
  return 0;
}
