// The command line of `shoal train`: the input split at NUL bytes into arguments. Nothing
// may crash or throw; what is refused is refused with a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "train/train_flags.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\0') {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  auto flags = shoal::train::ParseTrainFlags(args);
  if (!flags.ok() && flags.status().message().empty()) __builtin_trap();
  return 0;
}
