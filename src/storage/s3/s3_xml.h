// Parsers for the S3 service's XML replies. They take untrusted bytes (fuzzed by
// fuzz/s3_xml_fuzzer.cc) and never crash: malformed XML is kInternal naming what was
// expected ("the S3 service's reply to ... is not valid XML").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace shoal::storage {

struct S3ListEntry {
  std::string key;
  int64_t size = 0;
};

struct S3ListPage {
  std::vector<S3ListEntry> entries;
  bool truncated = false;
  std::string next_token;  // NextContinuationToken
};

// One page of ListMultipartUploads: the unfinished uploads under a prefix.
struct S3UploadsPage {
  std::vector<std::pair<std::string, std::string>> uploads;  // (key, upload id)
  bool truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

struct S3Error {
  std::string code;     // "NoSuchBucket", "" when the body is not an S3 error
  std::string message;
};

Result<S3ListPage> ParseListObjectsV2(const std::string& xml);
Result<S3UploadsPage> ParseListMultipartUploads(const std::string& xml);
// InitiateMultipartUploadResult's UploadId.
Result<std::string> ParseUploadId(const std::string& xml);
// An <Error> body; empty fields when it is not one.
S3Error ParseS3Error(const std::string& xml);

}  // namespace shoal::storage
