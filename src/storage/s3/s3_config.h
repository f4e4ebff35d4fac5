// S3Config: where the S3 service is and who we are, read the way the AWS tools read it.
//
//   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, `endpoint_url` in the profile of
//                the config file; else https://s3.<region>.amazonaws.com
//   region       AWS_REGION, AWS_DEFAULT_REGION, `region` in the config file; else us-east-1
//   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), else
//                the profile (AWS_PROFILE, default "default") of the shared credentials file
//                (AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials), else the same
//                profile of the config file, as the AWS tools read them
//   config file  AWS_CONFIG_FILE, default ~/.aws/config ("[profile NAME]" or "[default]")
//   CA bundle    AWS_CA_BUNDLE, else `ca_bundle` in the config file's profile: the PEM
//                file of the certificates an https endpoint's chain is checked against
//                instead of the system's (an S3 service with a private CA); a file that
//                cannot be read is InvalidArgument naming it
//   file paths   AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE and the CA bundle may start
//                with "~/" (HOME); a relative one is InvalidArgument naming it, since the
//                AM and every task would read it from a folder of their own
//   tuning       SHOAL_S3_MAX_ATTEMPTS (1-100, default 5), SHOAL_S3_PART_MB (5-5120, S3's
//                own bounds on a part, default 16), SHOAL_S3_PARALLELISM (1-64, default 4);
//                a value outside its range, or not a whole number, is InvalidArgument
//                naming the variable and the range
//
// Requests use path-style addressing (endpoint/bucket/key), which every S3 service takes.
// Thread-safety: LoadS3Config is a pure function of its inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/status.h"

namespace shoal::storage {

inline constexpr int kMaxS3Attempts = 100;
inline constexpr int kMinS3PartMb = 5;       // S3's smallest part (all but the last)
inline constexpr int kMaxS3PartMb = 5 << 10; // and its largest
inline constexpr int kMaxS3Parallelism = 64;
inline constexpr int64_t kMaxS3Parts = 10'000;  // parts of one multipart upload

struct S3Config {
  std::string endpoint;  // "http(s)://host[:port]", no trailing slash
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  std::string ca_bundle;         // a PEM file, or "" for the system's certificates
  int max_attempts = 5;          // per request, including the first (SHOAL_S3_MAX_ATTEMPTS)
  int64_t part_bytes = 16 << 20; // ranged GET and multipart part size (SHOAL_S3_PART_MB)
  int parallelism = 4;           // concurrent parts of one object (SHOAL_S3_PARALLELISM)
};

using EnvLookup = std::function<std::string(const std::string&)>;  // "" when unset
using FileLookup = std::function<Result<std::string>(const std::string&)>;

// Reads the settings; missing credentials are kFailedPrecondition naming the variables,
// a tuning variable out of its range is kInvalidArgument.
Result<S3Config> LoadS3Config(const EnvLookup& env, const FileLookup& read_file);
// The same from the process's environment and files.
Result<S3Config> LoadS3ConfigFromEnvironment();

// Parses an INI file into section -> key -> value ("[profile x]" becomes "x").
std::map<std::string, std::map<std::string, std::string>> ParseIni(const std::string& text);

}  // namespace shoal::storage
