#include "storage/s3/s3_storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>

#include "common/files.h"
#include "storage/local_io.h"
#include "storage/parallel.h"
#include "storage/s3/s3_xml.h"
#include "storage/s3/sigv4.h"

namespace shoal::storage {
namespace {

constexpr const char* kUnsigned = "UNSIGNED-PAYLOAD";

bool Ok2xx(const HttpResponse& r) { return r.status >= 200 && r.status < 300; }

std::string UriOf(const std::string& bucket, const std::string& key) { return "s3://" + bucket + "/" + key; }

Status PreadAll(int fd, char* buf, size_t n, int64_t offset, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, buf + got, n - got, offset + static_cast<int64_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoStatus("cannot read", path, errno);
    if (r == 0) return Unavailable(path + " became shorter while it was uploaded");
    got += static_cast<size_t>(r);
  }
  return Status::Ok();
}

Status PwriteAll(int fd, const char* data, size_t n, int64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::pwrite(fd, data + done, n - done, offset + static_cast<int64_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return ErrnoStatus("cannot write", path, errno);
    done += static_cast<size_t>(w);
  }
  return Status::Ok();
}

}  // namespace

Result<S3Location> ParseS3Uri(const std::string& uri) {
  if (uri.rfind("s3://", 0) != 0) return InvalidArgument("not an s3:// URI: " + uri);
  std::string rest = uri.substr(5);
  size_t slash = rest.find('/');
  S3Location loc{rest.substr(0, slash), slash == std::string::npos ? "" : rest.substr(slash + 1)};
  if (loc.bucket.empty()) return InvalidArgument("the URI " + uri + " names no bucket: write s3://bucket/key");
  return loc;
}

S3Storage::S3Storage(S3Config config, std::unique_ptr<HttpTransport> transport, const Clock& clock,
                     RetryPolicy retry)
    : config_(std::move(config)), transport_(std::move(transport)), clock_(clock), retry_(std::move(retry)) {
  retry_.max_attempts = config_.max_attempts;
  std::string rest = config_.endpoint.substr(config_.endpoint.find("://") + 3);
  host_ = rest.substr(0, rest.find('/'));
}

Result<HttpResponse> S3Storage::Send(const Call& call) {
  std::string path = "/" + UriEncode(call.where.bucket, true);
  if (!call.where.key.empty()) path += "/" + UriEncode(call.where.key, false);
  std::string query = CanonicalQuery(call.query);
  // Keys of sub-resources ("uploads") are sent bare, as S3 expects: "?uploads=" works too.
  std::string url = config_.endpoint + path + (query.empty() ? "" : "?" + query);
  return SendWithRetry(
      *transport_,
      [&] {
        HttpRequest request{call.method, url, call.headers, call.body, {}};
        if (call.make_sink) request.body_sink = call.make_sink();
        std::string hash = call.body.empty() && call.method != "PUT" ? Sha256Hex("") : kUnsigned;
        SignV4(request, config_, host_, path, query, hash, clock_.WallMillis());
        return request;
      },
      retry_);
}

Status S3Storage::ReplyError(const HttpResponse& reply, const std::string& uri, const std::string& what) const {
  S3Error error = ParseS3Error(reply.body);
  std::string detail = "HTTP " + std::to_string(reply.status) + (error.code.empty() ? "" : " " + error.code) +
                       (error.message.empty() ? "" : ": " + error.message);
  if (reply.status == 403 || error.code == "InvalidAccessKeyId" || error.code == "SignatureDoesNotMatch") {
    return FailedPrecondition("the S3 service at " + config_.endpoint + " refused the credentials for " + what + " " +
                              uri + " (" + detail +
                              "): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the shared credentials "
                              "file) and the bucket's permissions");
  }
  if (error.code == "NoSuchBucket") {
    auto loc = ParseS3Uri(uri);
    return NotFound("the bucket \"" + (loc.ok() ? loc->bucket : uri) + "\" does not exist at " + config_.endpoint +
                    " (" + what + " " + uri + ")");
  }
  if (reply.status == 404) return NotFound("no object " + uri + " (" + what + ": " + detail + ")");
  if (reply.status >= 500 || reply.status == 429) {
    return Unavailable("the S3 service at " + config_.endpoint + " failed to " + what + " " + uri + ": " + detail +
                       " (after " + std::to_string(config_.max_attempts) + " tries)");
  }
  return InvalidArgument("the S3 service at " + config_.endpoint + " refused to " + what + " " + uri + ": " + detail);
}

Result<HttpResponse> S3Storage::SendOk(const Call& call, const std::string& uri, const std::string& what) {
  Result<HttpResponse> reply = Send(call);
  if (!reply.ok()) return reply.status().WithContext("cannot " + what + " " + uri);
  if (!Ok2xx(*reply)) return ReplyError(*reply, uri, what);
  return reply;
}

Result<std::vector<ObjectInfo>> S3Storage::List(const std::string& prefix_uri) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(prefix_uri));
  std::vector<ObjectInfo> out;
  std::string token;
  for (;;) {
    Call call{"GET", {loc.bucket, ""}, {{"list-type", "2"}, {"prefix", loc.key}, {"max-keys", "1000"}}, {}, {}};
    if (!token.empty()) call.query["continuation-token"] = token;
    ASSIGN_OR_RETURN(HttpResponse reply, SendOk(call, prefix_uri, "list"));
    Result<S3ListPage> page = ParseListObjectsV2(reply.body);
    if (!page.ok()) return page.status().WithContext("cannot list " + prefix_uri);
    for (const S3ListEntry& e : page->entries) out.push_back({UriOf(loc.bucket, e.key), e.size, 0});
    if (!page->truncated) break;
    token = page->next_token;
  }
  return out;
}

Result<ObjectInfo> S3Storage::Stat(const std::string& uri) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
  if (loc.key.empty() || loc.key.back() == '/') return NotFound("no object " + uri);
  ASSIGN_OR_RETURN(HttpResponse reply, SendOk({"HEAD", loc, {}, {}, {}}, uri, "read"));
  auto it = reply.headers.find("content-length");
  int64_t size = it == reply.headers.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
  return ObjectInfo{uri, size, 0};
}

Result<std::string> S3Storage::ReadRange(const std::string& uri, int64_t offset, int64_t length) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
  if (length <= 0) return std::string();
  Call call{"GET", loc, {}, {{"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1)}}, {}};
  Result<HttpResponse> reply = Send(call);
  if (!reply.ok()) return reply.status().WithContext("cannot read " + uri);
  if (reply->status == 416) return std::string();
  if (!Ok2xx(*reply)) return ReplyError(*reply, uri, "read");
  if (reply->status == 200 && offset > 0) reply->body = reply->body.substr(std::min<size_t>(offset, reply->body.size()));
  if (static_cast<int64_t>(reply->body.size()) > length) reply->body.resize(static_cast<size_t>(length));
  return std::move(reply->body);
}

Result<std::unique_ptr<Reader>> S3Storage::OpenReader(const std::string& uri) {
  ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
  return std::unique_ptr<Reader>(std::make_unique<RangeReader>(*this, uri, info.size, config_.part_bytes));
}

Status S3Storage::GetToFile(const std::string& uri, const std::string& local_path) {
  ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
  std::string part = local_path + ".part";
  ASSIGN_OR_RETURN(int fd, CreateForWrite(part));
  int64_t chunk = config_.part_bytes;
  int parts = static_cast<int>((info.size + chunk - 1) / chunk);
  Status status = Status::Ok();
  if (int err = info.size > 0 ? ::posix_fallocate(fd, 0, info.size) : 0; err == ENOSPC || err == EDQUOT) {
    status = ErrnoStatus("cannot write", local_path, err);  // a full disk, before any byte is fetched
  }
  if (status.ok()) {
    ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
    status = RunParallel(parts, config_.parallelism, [&](int i) -> Status {
      int64_t offset = static_cast<int64_t>(i) * chunk;
      int64_t length = std::min(chunk, info.size - offset);
      int64_t written = 0;  // by this try; a retry starts the part again
      auto sink = [&](const char* data, size_t n) -> Status {
        if (written + static_cast<int64_t>(n) > length) return Unavailable("the object " + uri + " grew while it was downloaded");
        RETURN_IF_ERROR(PwriteAll(fd, data, n, offset + written, local_path));
        written += static_cast<int64_t>(n);
        return Status::Ok();
      };
      Call call{"GET", loc, {}, {{"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1)}},
                {}, [&]() -> std::function<Status(const char*, size_t)> {
                  written = 0;
                  return sink;
                }};
      ASSIGN_OR_RETURN(HttpResponse reply, SendOk(call, uri, "read"));
      if (!reply.body.empty()) RETURN_IF_ERROR(sink(reply.body.data(), reply.body.size()));  // transports that keep bodies
      if (written != length) return Unavailable("the object " + uri + " changed size while it was downloaded");
      return Status::Ok();
    });
  }
  if (!status.ok()) {
    ::close(fd);
    ::unlink(part.c_str());
    return status.WithContext("download of " + uri + " failed");
  }
  return FinishPart(fd, part, local_path);
}

Status S3Storage::PutString(const std::string& uri, const std::string& data) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
  return SendOk({"PUT", loc, {}, {}, data}, uri, "write").status();
}

Status S3Storage::PutFromFile(const std::string& local_path, const std::string& uri) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
  struct stat st;
  if (::stat(local_path.c_str(), &st) != 0) return ErrnoStatus("cannot upload", local_path, errno);
  if (st.st_size > config_.part_bytes) return PutMultipart(local_path, loc, uri, st.st_size);
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(local_path));
  return PutString(uri, bytes);
}

Status S3Storage::PutMultipart(const std::string& local_path, const S3Location& loc, const std::string& uri,
                               int64_t size) {
  ASSIGN_OR_RETURN(HttpResponse started, SendOk({"POST", loc, {{"uploads", ""}}, {}, {}}, uri, "start an upload to"));
  ASSIGN_OR_RETURN(std::string upload_id, ParseUploadId(started.body));
  int fd = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot upload", local_path, errno);
  const int64_t chunk = std::max(config_.part_bytes, (size + kMaxS3Parts - 1) / kMaxS3Parts);
  const int parts = static_cast<int>((size + chunk - 1) / chunk);
  // Each part in flight is held in memory: larger parts go fewer at a time.
  const int at_once = static_cast<int>(std::clamp<int64_t>(config_.parallelism * config_.part_bytes / chunk, 1,
                                                           config_.parallelism));
  std::vector<std::string> etags(static_cast<size_t>(parts));
  Status status = RunParallel(parts, at_once, [&](int i) -> Status {
    int64_t offset = static_cast<int64_t>(i) * chunk;
    std::string bytes(static_cast<size_t>(std::min(chunk, size - offset)), '\0');
    RETURN_IF_ERROR(PreadAll(fd, bytes.data(), bytes.size(), offset, local_path));
    Call call{"PUT", loc, {{"partNumber", std::to_string(i + 1)}, {"uploadId", upload_id}}, {}, std::move(bytes)};
    ASSIGN_OR_RETURN(HttpResponse reply, SendOk(call, uri, "upload a part of"));
    etags[static_cast<size_t>(i)] = reply.headers["etag"];
    return Status::Ok();
  });
  ::close(fd);
  if (status.ok()) {
    std::string body = "<CompleteMultipartUpload>";
    for (int i = 0; i < parts; ++i) {
      body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[static_cast<size_t>(i)] +
              "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    Result<HttpResponse> done = SendOk({"POST", loc, {{"uploadId", upload_id}}, {}, body}, uri, "complete the upload of");
    // A 200 reply may still carry an <Error> body.
    if (done.ok() && !ParseS3Error(done->body).code.empty()) status = ReplyError(*done, uri, "complete the upload of");
    else status = done.status();
  }
  if (!status.ok()) {
    (void)Send({"DELETE", loc, {{"uploadId", upload_id}}, {}, {}});  // abort: no partial object
    return status.WithContext("upload of " + local_path + " to " + uri + " failed");
  }
  return Status::Ok();
}

Status S3Storage::Copy(const std::string& from_uri, const std::string& to_uri) {
  ASSIGN_OR_RETURN(S3Location from, ParseS3Uri(from_uri));
  ASSIGN_OR_RETURN(S3Location to, ParseS3Uri(to_uri));
  Call call{"PUT", to, {}, {{"x-amz-copy-source", "/" + from.bucket + "/" + UriEncode(from.key, false)}}, {}};
  ASSIGN_OR_RETURN(HttpResponse reply, SendOk(call, to_uri, "copy to"));
  if (!ParseS3Error(reply.body).code.empty()) return ReplyError(reply, to_uri, "copy to");
  return Status::Ok();
}

Status S3Storage::Delete(const std::string& uri) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
  Result<HttpResponse> reply = Send({"DELETE", loc, {}, {}, {}});
  if (!reply.ok()) return reply.status().WithContext("cannot delete " + uri);
  if (reply->status == 404 && ParseS3Error(reply->body).code != "NoSuchBucket") return Status::Ok();
  if (!Ok2xx(*reply)) return ReplyError(*reply, uri, "delete");
  return Status::Ok();
}

Status S3Storage::DeletePrefix(const std::string& folder_uri) {
  std::string folder = folder_uri.empty() || folder_uri.back() == '/' ? folder_uri : folder_uri + "/";
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(folder));
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, List(folder));
  RETURN_IF_ERROR(RunParallel(static_cast<int>(objects.size()), config_.parallelism,
                              [&](int i) { return Delete(objects[static_cast<size_t>(i)].uri); }));
  // Uploads that a killed process started and never completed nor aborted.
  std::vector<std::pair<std::string, std::string>> uploads;
  std::string key_marker, id_marker;
  for (;;) {
    Call call{"GET", {loc.bucket, ""}, {{"uploads", ""}, {"prefix", loc.key}}, {}, {}};
    if (!key_marker.empty()) call.query["key-marker"] = key_marker;
    if (!id_marker.empty()) call.query["upload-id-marker"] = id_marker;
    ASSIGN_OR_RETURN(HttpResponse reply, SendOk(call, folder, "list the unfinished uploads under"));
    Result<S3UploadsPage> page = ParseListMultipartUploads(reply.body);
    if (!page.ok()) return page.status().WithContext("cannot list the unfinished uploads under " + folder);
    uploads.insert(uploads.end(), page->uploads.begin(), page->uploads.end());
    if (!page->truncated) break;
    key_marker = page->next_key_marker;
    id_marker = page->next_upload_id_marker;
  }
  return RunParallel(static_cast<int>(uploads.size()), config_.parallelism, [&](int i) -> Status {
    const auto& [key, id] = uploads[static_cast<size_t>(i)];
    Result<HttpResponse> reply = Send({"DELETE", {loc.bucket, key}, {{"uploadId", id}}, {}, {}});
    if (!reply.ok()) return reply.status().WithContext("cannot abort the upload of " + UriOf(loc.bucket, key));
    if (reply->status == 404 || Ok2xx(*reply)) return Status::Ok();  // 404: it ended meanwhile
    return ReplyError(*reply, UriOf(loc.bucket, key), "abort the upload of");
  });
}

Status S3Storage::CheckRoot(const std::string& uri) {
  ASSIGN_OR_RETURN(S3Location loc, ParseS3Uri(uri));
  Result<HttpResponse> reply = Send({"HEAD", {loc.bucket, ""}, {}, {}, {}});
  if (!reply.ok()) return reply.status().WithContext("cannot reach the bucket of " + uri);
  if (reply->status == 404) {
    return NotFound("the bucket \"" + loc.bucket + "\" does not exist at " + config_.endpoint + " (" + uri +
                    "): create it or fix the URI");
  }
  if (!Ok2xx(*reply)) return ReplyError(*reply, uri, "open");
  return Status::Ok();
}

Result<std::shared_ptr<Storage>> SharedS3Storage() {
  static std::mutex mu;
  static std::shared_ptr<Storage> shared;
  std::lock_guard lock(mu);
  if (shared) return shared;
  ASSIGN_OR_RETURN(S3Config config, LoadS3ConfigFromEnvironment());
  auto transport = NewCurlTransport(config.ca_bundle);
  shared = std::make_shared<S3Storage>(std::move(config), std::move(transport), SystemClock::Instance());
  return shared;
}

}  // namespace shoal::storage
