#include "storage/s3/s3_config.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "common/files.h"

namespace shoal::storage {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A whole number from `lowest` to `highest` in the variable `name`, or `fallback` when it
// is unset; anything else is refused, naming the variable and the range.
Result<int> SettingOr(const EnvLookup& env, const std::string& name, int lowest, int highest, int fallback) {
  std::string text = env(name);
  if (text.empty()) return fallback;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  bool whole = errno == 0 && end != text.c_str() && *end == '\0' && text.find_first_of(" \t+") == std::string::npos;
  if (!whole || value < lowest || value > highest) {
    return InvalidArgument(name + "=" + text.substr(0, 40) + " is not a whole number from " + std::to_string(lowest) +
                           " to " + std::to_string(highest) + "; fix: set it in that range, or unset it for " +
                           std::to_string(fallback));
  }
  return static_cast<int>(value);
}

// A file the AWS tools name by a variable or a config entry, as they read it: "~/" is the
// home folder. A relative path is refused: every Shoal process that reads it (the CLI,
// the AM, each task in its own folder) would look in a different folder.
Result<std::string> AbsoluteFile(const std::string& where, const std::string& path, const std::string& home) {
  if (path.starts_with("~/") && !home.empty()) return home + path.substr(1);
  if (path.starts_with("/")) return path;
  return InvalidArgument(where + " \"" + path.substr(0, 200) +
                         "\" is a relative path, which the job's tasks would read from their own folders; fix: give "
                         "its absolute path");
}

}  // namespace

std::map<std::string, std::map<std::string, std::string>> ParseIni(const std::string& text) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = Trim(line.substr(1, line.size() - 2));
      if (section.rfind("profile ", 0) == 0) section = Trim(section.substr(8));
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    out[section][Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return out;
}

Result<S3Config> LoadS3Config(const EnvLookup& env, const FileLookup& read_file) {
  S3Config config;
  std::string home = env("HOME");
  std::string profile = env("AWS_PROFILE");
  if (profile.empty()) profile = "default";
  auto profile_of = [&](const std::string& var,
                        const std::string& default_name) -> Result<std::map<std::string, std::string>> {
    std::string path = env(var);
    if (!path.empty()) {
      ASSIGN_OR_RETURN(path, AbsoluteFile(var, path, home));
    } else if (!home.empty()) {
      path = home + "/.aws/" + default_name;
    }
    std::map<std::string, std::string> values;
    if (path.empty()) return values;
    Result<std::string> text = read_file(path);
    if (!text.ok()) return values;
    auto ini = ParseIni(*text);
    if (auto it = ini.find(profile); it != ini.end()) values = it->second;
    return values;
  };
  ASSIGN_OR_RETURN(auto conf, profile_of("AWS_CONFIG_FILE", "config"));

  config.region = env("AWS_REGION");
  if (config.region.empty()) config.region = env("AWS_DEFAULT_REGION");
  if (config.region.empty()) config.region = conf.count("region") ? conf["region"] : "us-east-1";

  config.endpoint = env("AWS_ENDPOINT_URL_S3");
  if (config.endpoint.empty()) config.endpoint = env("AWS_ENDPOINT_URL");
  if (config.endpoint.empty() && conf.count("endpoint_url")) config.endpoint = conf["endpoint_url"];
  if (config.endpoint.empty()) config.endpoint = "https://s3." + config.region + ".amazonaws.com";
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  if (config.endpoint.rfind("http://", 0) != 0 && config.endpoint.rfind("https://", 0) != 0) {
    return InvalidArgument("the S3 endpoint \"" + config.endpoint +
                           "\" must start with http:// or https:// (set AWS_ENDPOINT_URL)");
  }

  config.ca_bundle = env("AWS_CA_BUNDLE");
  std::string ca_bundle_from = "AWS_CA_BUNDLE";
  if (config.ca_bundle.empty() && conf.count("ca_bundle")) {
    config.ca_bundle = conf["ca_bundle"];
    ca_bundle_from = "ca_bundle in the AWS config file (AWS_CONFIG_FILE)";
  }
  if (!config.ca_bundle.empty()) {
    ASSIGN_OR_RETURN(config.ca_bundle, AbsoluteFile(ca_bundle_from, config.ca_bundle, home));
  }
  if (!config.ca_bundle.empty() && !read_file(config.ca_bundle).ok()) {
    return InvalidArgument("the CA bundle \"" + config.ca_bundle +
                           "\" (AWS_CA_BUNDLE, or ca_bundle in the config file) cannot be read; fix: point it at "
                           "the PEM file of the CA that signed the S3 endpoint's certificate");
  }

  ASSIGN_OR_RETURN(auto credentials, profile_of("AWS_SHARED_CREDENTIALS_FILE", "credentials"));
  config.access_key = env("AWS_ACCESS_KEY_ID");
  config.secret_key = env("AWS_SECRET_ACCESS_KEY");
  config.session_token = env("AWS_SESSION_TOKEN");
  // As the AWS tools look: the profile of the shared credentials file, then the same
  // profile of the config file.
  for (auto* profile_values : {&credentials, &conf}) {
    if (!config.access_key.empty() && !config.secret_key.empty()) break;
    config.access_key = (*profile_values)["aws_access_key_id"];
    config.secret_key = (*profile_values)["aws_secret_access_key"];
    config.session_token = (*profile_values)["aws_session_token"];
  }
  if (config.access_key.empty() || config.secret_key.empty()) {
    return FailedPrecondition(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put the profile \"" + profile +
        "\" in the shared credentials file (~/.aws/credentials or AWS_SHARED_CREDENTIALS_FILE) or the config file "
        "(~/.aws/config or AWS_CONFIG_FILE)");
  }
  ASSIGN_OR_RETURN(config.max_attempts, SettingOr(env, "SHOAL_S3_MAX_ATTEMPTS", 1, kMaxS3Attempts, config.max_attempts));
  ASSIGN_OR_RETURN(int part_mb, SettingOr(env, "SHOAL_S3_PART_MB", kMinS3PartMb, kMaxS3PartMb,
                                          static_cast<int>(config.part_bytes >> 20)));
  config.part_bytes = static_cast<int64_t>(part_mb) << 20;
  ASSIGN_OR_RETURN(config.parallelism, SettingOr(env, "SHOAL_S3_PARALLELISM", 1, kMaxS3Parallelism, config.parallelism));
  return config;
}

Result<S3Config> LoadS3ConfigFromEnvironment() {
  return LoadS3Config(
      [](const std::string& name) {
        const char* v = std::getenv(name.c_str());
        return std::string(v ? v : "");
      },
      [](const std::string& path) { return ReadFile(path); });
}

}  // namespace shoal::storage
