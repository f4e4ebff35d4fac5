#include "train/train_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace shoal {

int TrainCommand(int argc, char** argv) {
  std::string bin;
  if (const char* env = std::getenv("SHOAL_TRAIN_BIN"); env != nullptr && *env != '\0') {
    bin = env;
  } else {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
      std::fprintf(stderr, "shoal train: cannot find the shoal binary's directory: %s\n", std::strerror(errno));
      return 1;
    }
    self[n] = '\0';
    bin = std::string(self);
    bin = bin.substr(0, bin.rfind('/') + 1) + "shoal-train";
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(bin.c_str()));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(bin.c_str(), args.data());
  std::fprintf(stderr, "shoal train: cannot run %s: %s (build it with the rest of Shoal: scripts/build.sh)\n",
               bin.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace shoal
