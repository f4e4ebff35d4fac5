// Fuzzes how Shoal reads a user's S3 settings (storage/s3/s3_config.h): the AWS config and
// shared credentials files and the environment, as one input: the config file's text, a
// NUL, the credentials file's text, a NUL, then NAME=value lines for the environment.
// Whatever they hold, reading neither crashes nor yields settings a transfer could not
// use: an endpoint that is not http(s):// or ends in '/', missing credentials, a part
// size outside S3's bounds, no attempt or no parallelism, a CA bundle that cannot be read;
// and every refusal names what to fix.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "storage/s3/s3_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal::storage;
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t first = input.find('\0');
  size_t second = first == std::string::npos ? std::string::npos : input.find('\0', first + 1);
  std::map<std::string, std::string> files{{"/h/.aws/config", input.substr(0, first)}};
  if (first != std::string::npos) files["/h/.aws/credentials"] = input.substr(first + 1, second - first - 1);
  std::map<std::string, std::string> env{{"HOME", "/h"}};
  if (second != std::string::npos) {
    std::string lines = input.substr(second + 1);
    for (size_t at = 0; at < lines.size();) {
      size_t end = lines.find('\n', at);
      std::string line = lines.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (size_t eq = line.find('='); eq != std::string::npos && eq > 0) env[line.substr(0, eq)] = line.substr(eq + 1);
      at = end == std::string::npos ? lines.size() : end + 1;
    }
  }
  auto config = LoadS3Config([&](const std::string& name) { return env.count(name) ? env[name] : std::string(); },
                             [&](const std::string& path) -> shoal::Result<std::string> {
                               if (!files.count(path)) return shoal::NotFound(path);
                               return files[path];
                             });
  (void)ParseIni(input);
  if (!config.ok()) {
    const std::string& why = config.status().message();
    bool named = why.find("AWS_") != std::string::npos || why.find("SHOAL_S3_") != std::string::npos ||
                 why.find("endpoint") != std::string::npos;
    if (!named) std::abort();
    return 0;
  }
  const std::string& endpoint = config->endpoint;
  if (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0) std::abort();
  if (endpoint.back() == '/') std::abort();
  if (config->access_key.empty() || config->secret_key.empty()) std::abort();
  if (config->part_bytes < (int64_t{kMinS3PartMb} << 20) || config->part_bytes > (int64_t{kMaxS3PartMb} << 20)) std::abort();
  if (config->max_attempts < 1 || config->max_attempts > kMaxS3Attempts) std::abort();
  if (config->parallelism < 1 || config->parallelism > kMaxS3Parallelism) std::abort();
  if (!config->ca_bundle.empty() && !files.count(config->ca_bundle)) std::abort();  // a CA file that is not there
  return 0;
}
