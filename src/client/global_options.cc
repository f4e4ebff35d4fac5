#include "client/global_options.h"

namespace shoal {

GlobalOptions SplitGlobalOptions(const std::vector<std::string>& argv) {
  GlobalOptions out;
  bool options_end = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (i > 0 && !options_end) {
      if (arg == "--") {
        options_end = true;
      } else if (arg == "--home" && i + 1 < argv.size()) {
        out.home = argv[++i];
        continue;
      } else if (arg.starts_with("--home=")) {
        out.home = arg.substr(7);
        continue;
      }
    }
    out.rest.push_back(arg);
  }
  return out;
}

}  // namespace shoal
