// Storage: one interface over every place Shoal reads inputs from and writes outputs to,
// chosen by the URI's scheme.
//
//   /abs/path, rel/path, file:///abs/path   a local or shared file system (NFS, Lustre)
//   s3://bucket/key                         any S3 service (storage/s3/), endpoint, region
//                                           and credentials as the AWS tools take them
//   mem://bucket/key                        an in-process fake, for unit tests only
//
// Contract:
//  - URIs name objects (files). A "prefix" is a URI whose objects are listed recursively
//    by List (for a file system: every regular file under that directory, or the file
//    itself); returned URIs keep the caller's scheme and spelling of the root.
//  - Errors are Statuses that name the URI: kNotFound for a missing object or bucket,
//    kInvalidArgument for a malformed URI or an unknown scheme, kFailedPrecondition for
//    refused credentials, kUnavailable after the retries of a broken service were spent,
//    kResourceExhausted for a full local disk.
//  - GetToFile writes to local_path.part and renames into place: local_path is either
//    whole or absent. PutFromFile makes the object appear whole or not at all (S3:
//    multipart for large files, aborted on failure).
//  - Copy is server-side where the service can (S3 CopyObject, a file-system copy); it
//    is what the output commit (data/output_commit.h) builds on.
//  - DeletePrefix removes every object under a folder and what unfinished writes left
//    there: on S3 the multipart uploads started under it are aborted (their parts are
//    stored, and billed, until then); on a file system the folder goes with its ".part"
//    files. A folder that does not exist is not an error.
// Thread-safety: every implementation may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::storage {

struct ObjectInfo {
  std::string uri;     // the full URI of the object, in the caller's scheme
  int64_t size = 0;    // bytes
  int64_t mtime_ms = 0;
};

// A sequential reader over one object (stream mode, the native trainer's data sources).
class Reader {
 public:
  virtual ~Reader() = default;
  // Reads up to n bytes into buf; 0 at the end of the object.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
};

class Storage {
 public:
  virtual ~Storage() = default;

  // Every object whose URI starts with prefix_uri (for a file system: the file, or every
  // file under the directory), sorted by URI. An empty list is not an error.
  virtual Result<std::vector<ObjectInfo>> List(const std::string& prefix_uri) = 0;
  virtual Result<ObjectInfo> Stat(const std::string& uri) = 0;
  // Bytes [offset, offset + length) of the object (fewer at its end).
  virtual Result<std::string> ReadRange(const std::string& uri, int64_t offset, int64_t length) = 0;
  virtual Result<std::unique_ptr<Reader>> OpenReader(const std::string& uri) = 0;
  virtual Status GetToFile(const std::string& uri, const std::string& local_path) = 0;
  virtual Status PutFromFile(const std::string& local_path, const std::string& uri) = 0;
  virtual Status PutString(const std::string& uri, const std::string& data) = 0;
  virtual Status Copy(const std::string& from_uri, const std::string& to_uri) = 0;
  // Deleting a missing object is not an error.
  virtual Status Delete(const std::string& uri) = 0;
  // Every object under folder_uri ("<folder_uri>/..."), and unfinished uploads there.
  virtual Status DeletePrefix(const std::string& folder_uri) = 0;
  // OK when the URI's root exists: the S3 bucket, or for a file system the nearest
  // existing ancestor directory (always true). kNotFound names the bucket otherwise.
  virtual Status CheckRoot(const std::string& uri) = 0;
};

// The storage for a URI's scheme ("" for a plain path, "file", "s3", "mem"). An unknown
// scheme is kInvalidArgument naming it and the known ones. S3 settings come from the
// environment when the first s3:// storage is opened (storage/s3/s3_config.h).
Result<std::shared_ptr<Storage>> OpenStorage(const std::string& uri);

// The URI's scheme: "" for a plain path.
std::string UriScheme(const std::string& uri);
// True when the URI has a glob character (* ? [) in it.
bool HasGlob(const std::string& uri);
// Expands a URI: a glob matches objects ("*" and "?" do not cross "/", "**" does); a
// URI without glob characters lists its prefix (one file, or a folder's files). Folder
// markers (keys ending in "/") are not files and are left out. A URI that matches
// nothing is kNotFound naming it.
Result<std::vector<ObjectInfo>> Expand(Storage& storage, const std::string& uri);
// Convenience: OpenStorage + Expand.
Result<std::vector<ObjectInfo>> ExpandUri(const std::string& uri);
// a + "/" + b, without doubling the slash.
std::string JoinUri(const std::string& a, const std::string& b);

}  // namespace shoal::storage
