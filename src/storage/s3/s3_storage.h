// S3Storage: s3://bucket/key on any S3 service (AWS, Ceph's RADOS Gateway, MinIO...).
//
// Contract (beyond storage.h):
//  - Every request is signed with SigV4 and retried by retry.h (throttling, 5xx, broken
//    connections) with back-off; what still fails names the object and the service.
//  - List pages through ListObjectsV2 (1000 keys a page) with continuation tokens.
//  - Objects larger than part_bytes are downloaded as parallel ranged GETs into
//    local_path.part (renamed when whole) and uploaded as multipart uploads (aborted on
//    failure, so no partial object appears); smaller ones with one GET or PUT.
//  - An upload has at most S3's 10,000 parts: a file larger than 10,000 x part_bytes
//    goes in parts of size / 10,000 (rounded up), with as few of them at once as keep the
//    bytes in flight within parallelism x part_bytes (one at least).
//  - DeletePrefix deletes what ListObjectsV2 lists under the folder, then aborts every
//    upload ListMultipartUploads lists there (one a killed process left unfinished).
//  - Refused credentials are kFailedPrecondition naming the variables to check; a missing
//    bucket is kNotFound naming the bucket.
// Thread-safety: safe from any thread; parts run on threads of their own.
#pragma once

#include <memory>

#include "common/clock.h"
#include "storage/s3/http_transport.h"
#include "storage/s3/retry.h"
#include "storage/s3/s3_config.h"
#include "storage/storage.h"

namespace shoal::storage {

struct S3Location {
  std::string bucket;
  std::string key;  // may be empty (the bucket itself)
};
// "s3://bucket/key" -> {bucket, key}; kInvalidArgument when the bucket is missing.
Result<S3Location> ParseS3Uri(const std::string& uri);

class S3Storage final : public Storage {
 public:
  S3Storage(S3Config config, std::unique_ptr<HttpTransport> transport, const Clock& clock, RetryPolicy retry = {});

  Result<std::vector<ObjectInfo>> List(const std::string& prefix_uri) override;
  Result<ObjectInfo> Stat(const std::string& uri) override;
  Result<std::string> ReadRange(const std::string& uri, int64_t offset, int64_t length) override;
  Result<std::unique_ptr<Reader>> OpenReader(const std::string& uri) override;
  Status GetToFile(const std::string& uri, const std::string& local_path) override;
  Status PutFromFile(const std::string& local_path, const std::string& uri) override;
  Status PutString(const std::string& uri, const std::string& data) override;
  Status Copy(const std::string& from_uri, const std::string& to_uri) override;
  Status Delete(const std::string& uri) override;
  Status DeletePrefix(const std::string& folder_uri) override;
  Status CheckRoot(const std::string& uri) override;

  const S3Config& config() const { return config_; }

 private:
  struct Call {
    std::string method;
    S3Location where;
    std::map<std::string, std::string> query;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // For GETs written straight to a file: a fresh sink for each try (retries restart).
    std::function<std::function<Status(const char*, size_t)>()> make_sink;
  };
  Result<HttpResponse> Send(const Call& call);
  // The Status for a non-2xx reply about `uri`.
  Status ReplyError(const HttpResponse& reply, const std::string& uri, const std::string& what) const;
  Result<HttpResponse> SendOk(const Call& call, const std::string& uri, const std::string& what);
  Status PutMultipart(const std::string& local_path, const S3Location& where, const std::string& uri, int64_t size);

  S3Config config_;
  std::unique_ptr<HttpTransport> transport_;
  const Clock& clock_;
  RetryPolicy retry_;
  std::string host_;  // "host[:port]" of the endpoint
};

// The process's S3 storage, configured from the environment on first success.
Result<std::shared_ptr<Storage>> SharedS3Storage();

}  // namespace shoal::storage
